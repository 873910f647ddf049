package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// held is what one database's dependents hold: the sha256 of its Secret's
// password and of every file of its claim's volume.
type held struct {
	secret string
	volume map[string]string
	// dir is the volume's folder, which the uninstall removes; uid is the
	// Database's, which the restored one does not have.
	dir string
	uid types.UID
}

// installWithData creates the policy, the install and the undoDatabases, each
// owning a Secret and a claim with bytes, and returns their sha256.
func (e *env) installWithData(ctx context.Context) (map[string]held, error) {
	step("Creating a CleanupPolicy with backup: Velero backs up everything an uninstall destroys before the first delete")
	policy := &cleanupv1alpha1.CleanupPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: cleanupv1alpha1.CleanupPolicySpec{Backup: &cleanupv1alpha1.BackupSpec{Velero: &cleanupv1alpha1.VeleroBackup{Namespace: cluster.VeleroNamespace}}}}
	if err := e.c.Create(ctx, policy); err != nil {
		return nil, err
	}
	step("Creating an operator install as OLM leaves it (%s in %s), and its undoDatabases, each owning a Secret and a claim with data", undoInstall.CSVName, undoInstall.Namespace)
	if _, err := undoInstall.Create(ctx, e.c); err != nil {
		return nil, err
	}
	out := map[string]held{}
	for _, name := range undoDatabases {
		h, err := e.database(ctx, undoInstall.Targets[0], name)
		if err != nil {
			return nil, err
		}
		out[name] = h
		fmt.Printf("    Database %s/%s: Secret %s-auth (password sha256 %s), claim %s-data (%d files: %s)\n",
			undoInstall.Targets[0], name, name, short(h.secret), name, len(h.volume), sums(h.volume))
	}
	return out, nil
}

// database creates one Database, its Secret and its claim, and writes bytes into the claim's volume.
func (e *env) database(ctx context.Context, ns, name string) (held, error) {
	u := fixtures.Operand(db, ns, name)
	if err := e.c.Create(ctx, u); err != nil {
		return held{}, err
	}
	yes := true
	ref := metav1.OwnerReference{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Name: u.GetName(), UID: u.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}
	password := make([]byte, 24)
	_, _ = rand.Read(password)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-auth", OwnerReferences: []metav1.OwnerReference{ref}},
		Data: map[string][]byte{"password": password}}
	class := cluster.StorageClass
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-data", OwnerReferences: []metav1.OwnerReference{ref}},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: &class,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}}
	for _, o := range []client.Object{secret, claim} {
		if err := e.c.Create(ctx, o); err != nil {
			return held{}, err
		}
	}
	var dir string
	if err := waitFor(ctx, "claim "+ns+"/"+claim.Name+" bound to a volume of the CSI driver", func(ctx context.Context) (bool, error) {
		var err error
		dir, err = e.csi.VolumePath(ctx, ns, claim.Name)
		return err == nil, nil
	}); err != nil {
		return held{}, err
	}
	data := make([]byte, 64<<10)
	_, _ = rand.Read(data)
	if err := os.MkdirAll(filepath.Join(dir, "pgdata"), 0o755); err != nil {
		return held{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "pgdata", "base.bin"), data, 0o644); err != nil {
		return held{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "PG_VERSION"), []byte("17\n"), 0o644); err != nil {
		return held{}, err
	}
	v, err := volumeSums(dir)
	return held{secret: sum(password), volume: v, dir: dir, uid: u.GetUID()}, err
}

// uninstall deletes the CSV and follows the uninstall to Completed: the
// Backup verified first, then the undoDatabases, their Secrets, claims and
// volumes gone.
func (e *env) uninstall(ctx context.Context, before map[string]held) error {
	if err := waitFor(ctx, "csv-cleaner's finalizer on the CSV", func(ctx context.Context) (bool, error) {
		csv := &operatorsv1alpha1.ClusterServiceVersion{}
		err := e.c.Get(ctx, undoInstall.Key(), csv)
		return err == nil && slices.Contains(csv.Finalizers, decide.DefaultFinalizer), client.IgnoreNotFound(err)
	}); err != nil {
		return err
	}
	step("Uninstalling: deleting the CSV")
	fixtures.WaitNextSecond(time.Now())
	if err := e.c.Delete(ctx, undoInstall.CSV()); err != nil {
		return err
	}
	rec := &cleanupv1alpha1.CSVCleanup{}
	last := ""
	if err := waitFor(ctx, "the uninstall to complete", func(ctx context.Context) (bool, error) {
		if err := e.c.Get(ctx, undoInstall.Key(), rec); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if line := fmt.Sprintf("%s: %s", rec.Status.Phase, rec.Status.Message); line != last && rec.Status.Phase != "" {
			fmt.Printf("    csvcleanup/%s %s\n", undoInstall.CSVName, line)
			last = line
		}
		return rec.Status.Phase == cleanupv1alpha1.PhaseCompleted, nil
	}); err != nil {
		return err
	}
	b := rec.Status.Backup
	if b == nil || !b.Verified {
		return fmt.Errorf("the uninstall completed without a verified Backup: %+v", b)
	}
	fmt.Printf("    Velero's Backup %s/%s: %s, verified before the first delete; it holds %d deleted objects, %d dependents and %d volumes' snapshots\n",
		b.Namespace, b.Name, b.Phase, b.Planned, b.Dependents, b.Volumes)
	return e.gone(ctx, before)
}

// gone waits until the undoDatabases, their Secrets, claims and volumes are gone.
func (e *env) gone(ctx context.Context, before map[string]held) error {
	ns := undoInstall.Targets[0]
	for _, name := range undoDatabases {
		for _, o := range []client.Object{fixtures.Operand(db, ns, name), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-auth"}},
			&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-data"}}} {
			if err := waitFor(ctx, "the garbage collector to delete "+o.GetName(), func(ctx context.Context) (bool, error) {
				err := e.c.Get(ctx, client.ObjectKeyFromObject(o), o)
				return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
			}); err != nil {
				return err
			}
		}
	}
	if err := waitFor(ctx, "the volumes to be deleted", func(context.Context) (bool, error) {
		pvs := &corev1.PersistentVolumeList{}
		return e.c.List(ctx, pvs) == nil && len(pvs.Items) == 0, nil
	}); err != nil {
		return err
	}
	for name, h := range before {
		switch _, err := os.Stat(h.dir); {
		case err == nil:
			return fmt.Errorf("the volume of %s is still there (%s)", name, h.dir)
		case !os.IsNotExist(err):
			return fmt.Errorf("reading the volume of %s: %w", name, err)
		}
	}
	fmt.Printf("    The data is gone: Databases, Secrets and claims deleted, their volumes' folders removed by the CSI driver.\n")
	return nil
}

// reinstall installs the operator again, once the undo is done: its CSV,
// Succeeded.
func (e *env) reinstall(ctx context.Context) error {
	step("Installing the operator again, now that what came back is linked to its owners (its CSV, Succeeded, owning the CRD)")
	csv := undoInstall.CSV()
	if err := e.c.Create(ctx, csv); err != nil {
		return err
	}
	base := csv.DeepCopy()
	csv.Status = operatorsv1alpha1.ClusterServiceVersionStatus{Phase: operatorsv1alpha1.CSVPhaseSucceeded, Reason: operatorsv1alpha1.CSVReasonInstallSuccessful}
	return e.c.Status().Patch(ctx, csv, client.MergeFrom(base))
}

// check compares what came back with what was there: every byte, and each
// object linked to its restored owner.
func (e *env) check(ctx context.Context, before map[string]held) error {
	step("Checking what came back against what the uninstall destroyed")
	ns := undoInstall.Targets[0]
	var failed []string
	for _, name := range undoDatabases {
		u := fixtures.Operand(db, ns, name)
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			return fmt.Errorf("database %s is not back: %w", name, err)
		}
		secret, claim := &corev1.Secret{}, &corev1.PersistentVolumeClaim{}
		if err := e.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name + "-auth"}, secret); err != nil {
			return fmt.Errorf("the Secret %s-auth is not back: %w", name, err)
		}
		if err := e.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name + "-data"}, claim); err != nil {
			return fmt.Errorf("claim %s-data is not back: %w", name, err)
		}
		dir, err := e.csi.VolumePath(ctx, ns, claim.Name)
		if err != nil {
			return err
		}
		after, err := volumeSums(dir)
		if err != nil {
			return err
		}
		was := before[name]
		fmt.Printf("    Database %s/%s (uid %s, was %s): password sha256 %s -> %s; volume %s -> %s\n",
			ns, name, u.GetUID(), was.uid, short(was.secret), short(sum(secret.Data["password"])), sums(was.volume), sums(after))
		fmt.Printf("      Secret owned by %s, claim owned by %s, claim from snapshot %s\n", owners(secret), owners(claim), source(claim))
		if sum(secret.Data["password"]) != was.secret || !maps.Equal(after, was.volume) {
			failed = append(failed, name+": the data differs")
		}
		for _, o := range []client.Object{secret, claim} {
			if refs := o.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != u.GetUID() {
				failed = append(failed, fmt.Sprintf("%s %s is not linked to the restored Database (%s)", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), owners(o)))
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("not back as it was: %v", failed)
	}
	fmt.Println("    Every byte is back, and every Secret and claim is linked to its restored Database.")
	return nil
}

func owners(o client.Object) string {
	var out []string
	for _, r := range o.GetOwnerReferences() {
		out = append(out, r.Kind+" "+r.Name+" (uid "+string(r.UID)+")")
	}
	if len(out) == 0 {
		return "nobody"
	}
	return fmt.Sprint(out)
}

func source(c *corev1.PersistentVolumeClaim) string {
	if ds := c.Spec.DataSource; ds != nil {
		return ds.Name
	}
	return "none"
}

// volumeSums are the sha256 of every file under dir, by path.
func volumeSums(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = sum(b)
		return nil
	})
	return out, err
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func short(s string) string { return s[:min(12, len(s))] }

// sums says a volume's files and their sha256, in order.
func sums(m map[string]string) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := ""
	for _, k := range keys {
		out += fmt.Sprintf("%s=%s ", k, short(m[k]))
	}
	return out
}

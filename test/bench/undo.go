package bench

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/undo"
	"github.com/csv-cleaner/csv-cleaner/pkg/undoplan"
	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// Undoable is an undoable uninstall of operands that own what the garbage
// collector deletes with them and data: the gate against its two parts,
// and the undo against Velero's own Restore of the same Backup.
type Undoable struct {
	// Workers is Velero's item-block worker count.
	Workers int
	// Operands each own a Secret, a ConfigMap and a PersistentVolumeClaim
	// of the CSI stack (a snapshot each).
	Operands int
	// Uninstall, Floor, Gate and Velero are as Backup's: the uninstall to
	// the release, the per-object floor on an identical set of operands,
	// the uninstall's own Backup (polled from when it appears), and
	// Velero's own Backup of the same objects made by hand.
	Uninstall, Floor, Gate, Velero time.Duration
	// VeleroAfter is Velero's own Backup by hand of the floor's identical
	// set, made after the uninstall's Backup: Velero then holds the
	// snapshots of two Backups, as the uninstall's own Backup held those
	// of Velero's first.
	VeleroAfter time.Duration
	// Items and Volumes are what the uninstall's Backup held.
	Items, Volumes int32
	// Undo is `csv-cleaner undo` (pkg/undo, in this process) from its
	// start until it has checked that everything came back; Restore is
	// Velero's own Restore of the same Backup, of the same objects, from
	// its creation until Completed (polled every 50 ms).
	Undo, Restore time.Duration
	// Restored is how many objects the undo restored; Linked, how many it
	// linked to their owners again.
	Restored, Linked int
	// Second is the second uninstall of the restored install (the
	// extension made again), to the release, and SecondGate its own Backup.
	Second, SecondGate time.Duration
}

// Ratio is the uninstall over the floor and its own Backup together.
func (u Undoable) Ratio() float64 { return u.Uninstall.Seconds() / (u.Floor + u.Gate).Seconds() }

// UndoRatio is the undo over Velero's own Restore.
func (u Undoable) UndoRatio() float64 { return u.Undo.Seconds() / u.Restore.Seconds() }

// SecondRatio is the second uninstall over the first.
func (u Undoable) SecondRatio() float64 { return u.Second.Seconds() / u.Uninstall.Seconds() }

// MeasureUndoable times an uninstall under backup.velero whose operands own
// a Secret and a claim each, with real Velero taking CSI snapshots, against
// the floor; then `csv-cleaner undo` of it, and Velero's own Restore of the
// same Backup. docs/benchmarks.md says how.
//
// Velero runs workers item-block workers (0: the harness's count). With
// gateOnly, only the gated uninstall and the floor are measured (the same
// uninstall at another worker count, side by side with the full run).
func (e *Env) MeasureUndoable(ctx context.Context, n, workers int, gateOnly bool) (Undoable, error) {
	if workers == 0 {
		var err error
		if workers, err = cluster.VeleroWorkers(); err != nil {
			return Undoable{}, err
		}
	}
	res := Undoable{Operands: n, Workers: workers}
	id := fmt.Sprintf("undoable%dw%d", n, workers)
	cleaner, err := e.StartCleaner(ctx, "csv-cleaner-"+id)
	if err != nil {
		return res, err
	}
	defer func() { _ = cleaner.Stop(30 * time.Second) }()
	w, err := e.extensionWorkload(ctx, id, n, func(p *cleanupv1alpha1.CleanupPolicySpec) {
		p.CRDs = cleanupv1alpha1.Orphan
		p.Backup = &cleanupv1alpha1.BackupSpec{Velero: &cleanupv1alpha1.VeleroBackup{Namespace: cluster.VeleroNamespace}}
	})
	if err != nil {
		return res, err
	}
	kc := e.harness()
	// The garbage collector, which deletes the dependents, and the volume
	// controllers, which bind the claims and let them go: the benchmarks'
	// control plane runs without them.
	kcm, err := e.CP.StartControllers(kc.BinDir, "kube-controller-manager-volumes",
		[]string{"garbagecollector", "persistentvolume-binder", "pv-protection", "pvc-protection"})
	if err != nil {
		return res, err
	}
	defer func() { _ = kcm.Stop(10 * time.Second) }()
	csi, err := kc.StartCSI(ctx)
	if err != nil {
		return res, err
	}
	defer func() { _ = csi.Stop() }()
	velero, err := kc.StartVeleroCSIWorkers(ctx, workers)
	if err != nil {
		return res, err
	}
	defer func() { _ = velero.Stop() }()
	if err := e.backupRights(ctx); err != nil {
		return res, err
	}
	owners, err := e.listOperands(ctx, w.ext.CRDs)
	if err != nil {
		return res, err
	}
	// The floor's set owns the same: the garbage collector deletes as much
	// while the floor runs as while the uninstall does.
	floorOwners, err := e.listOperands(ctx, w.floor)
	if err != nil {
		return res, err
	}
	if err := e.dependents(ctx, owners, id); err != nil {
		return res, err
	}
	if err := e.dependents(ctx, floorOwners, id+"-floor"); err != nil {
		return res, err
	}

	// Velero's own Backup of the same objects as the uninstall's: the
	// floor's dependents, in the same namespaces, left out by their label,
	// and the claims' PersistentVolumes left out as csv-cleaner's Backup
	// leaves them (Velero's workers would record them at once).
	if !gateOnly {
		if res.Velero, err = e.veleroBackupOf(ctx, "reference-"+id, []string{decide.EveryNamespace},
			append(resourcesOf(w.ext.CRDs), "secrets", "configmaps", "persistentvolumeclaims"), id+"-floor", "persistentvolumes"); err != nil {
			return res, err
		}
	}
	var rec *cleanupv1alpha1.ExtensionCleanup
	if res.Uninstall, res.Gate, rec, err = e.gatedUninstall(ctx, w); err != nil {
		return res, err
	}
	if !gateOnly {
		if res.VeleroAfter, err = e.veleroBackupOf(ctx, "reference-after-"+id, []string{decide.EveryNamespace},
			append(resourcesOf(w.floor), "secrets", "configmaps", "persistentvolumeclaims"), id, "persistentvolumes"); err != nil {
			return res, err
		}
	}
	if res.Floor, err = e.perObjectFloor(ctx, w.floor); err != nil {
		return res, err
	}
	if err := e.allGone(ctx, floorOwners); err != nil {
		return res, err
	}
	if b := rec.Status.Backup; b == nil || !b.Verified || int(b.Planned) != n || int(b.Dependents) != dependentsEach*n || int(b.Volumes) != n {
		return res, fmt.Errorf("the record's backup is %+v, want a verified Backup of %d resources, %d dependents and %d volumes", b, n, dependentsEach*n, n)
	}
	res.Items, res.Volumes = rec.Status.Backup.Items, rec.Status.Backup.Volumes
	backup := rec.Status.Backup.Name
	if gateOnly {
		if err := e.allGone(ctx, owners); err != nil {
			return res, err
		}
		if err := velero.Healthy(); err != nil {
			return res, fmt.Errorf("velero at %d item-block workers: %w", workers, err)
		}
		return res, e.removeExtensionWorkload(ctx, w)
	}

	if err := e.allGone(ctx, owners); err != nil {
		return res, err
	}
	began := time.Now()
	undone, err := undo.Run(ctx, e.Client, undo.Options{Owner: decide.Owner{Kind: decide.KindExtension, Name: id}, Poll: 50 * time.Millisecond})
	res.Undo = time.Since(began)
	if err != nil {
		return res, fmt.Errorf("undoing the uninstall: %w", err)
	}
	if missing := undone.Missing(); missing > 0 || len(undone.Rows) != (1+dependentsEach)*n {
		return res, fmt.Errorf("the undo left %d of %d objects missing (%d rows)", missing, (1+dependentsEach)*n, len(undone.Rows))
	}
	for _, row := range undone.Rows {
		if row.State == undoplan.StateRestored {
			res.Restored++
		}
		if len(row.Owners) > 0 {
			res.Linked++
		}
	}
	if res.Linked != dependentsEach*n {
		return res, fmt.Errorf("the undo linked %d objects to their owners again, want the %d dependents", res.Linked, dependentsEach*n)
	}

	// The restored install uninstalled again: the extension made again,
	// the restored dependents the restored resources' again.
	if err := e.reinstallExtension(ctx, w); err != nil {
		return res, err
	}
	if err := e.held(ctx, id); err != nil {
		return res, err
	}
	if res.Second, res.SecondGate, rec, err = e.gatedUninstall(ctx, w); err != nil {
		return res, fmt.Errorf("the second uninstall: %w", err)
	}
	if b := rec.Status.Backup; b == nil || !b.Verified || int(b.Planned) != n || int(b.Dependents) != dependentsEach*n || int(b.Volumes) != n {
		return res, fmt.Errorf("the second uninstall's backup is %+v, want a verified Backup of %d resources, %d dependents and %d volumes, as the first", b, n, dependentsEach*n, n)
	}
	if err := e.allGone(ctx, owners); err != nil {
		return res, fmt.Errorf("after the second uninstall: %w", err)
	}
	if err := velero.Healthy(); err != nil {
		return res, fmt.Errorf("velero at %d item-block workers: %w", workers, err)
	}

	if err := e.deleteAll(ctx, owners); err != nil {
		return res, err
	}
	if res.Restore, err = e.veleroRestore(ctx, backup, n); err != nil {
		return res, err
	}
	if err := e.deleteAll(ctx, owners); err != nil {
		return res, err
	}
	return res, e.removeExtensionWorkload(ctx, w)
}

// reinstallExtension makes the workload's ClusterExtension again, as OLM v1
// does when it installs it again: the extension, its operator's objects,
// and its CRDs (kept, detached by the uninstall) its own again.
func (e *Env) reinstallExtension(ctx context.Context, w *extensionWorkload) error {
	// The uninstalled extension goes once operator-controller's own
	// finalizers have (no operator-controller runs here), and the garbage
	// collector then deletes its operator's objects.
	old := w.objs
	if err := e.Client.Patch(ctx, old.Extension, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing operator-controller's finalizers from ClusterExtension %s: %w", w.id, err)
	}
	gone := []client.Object{old.Extension, old.Role, old.Binding, old.Deployment}
	if old.HelmRelease != nil {
		gone = append(gone, old.HelmRelease)
	}
	if err := controlplane.WaitFor(ctx, 2*time.Minute, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		for _, o := range gone {
			if err := e.Client.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object)); !apierrors.IsNotFound(err) {
				return false, client.IgnoreNotFound(err)
			}
		}
		return true, nil
	}); err != nil {
		return fmt.Errorf("waiting for ClusterExtension %s and its operator's objects to go: %w", w.id, err)
	}
	var err error
	if w.objs, err = w.ext.Create(ctx, e.Client); err != nil {
		return fmt.Errorf("making ClusterExtension %s again: %w", w.id, err)
	}
	for _, want := range w.objs.CRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := e.Client.Get(ctx, client.ObjectKeyFromObject(want), crd); err != nil {
			return fmt.Errorf("reading CRD %s: %w", want.Name, err)
		}
		base := crd.DeepCopy()
		for k, v := range want.Labels {
			metav1.SetMetaDataLabel(&crd.ObjectMeta, k, v)
		}
		crd.OwnerReferences = want.OwnerReferences
		if err := e.Client.Patch(ctx, crd, client.MergeFrom(base)); err != nil {
			return fmt.Errorf("making CRD %s ClusterExtension %s's again: %w", want.Name, w.id, err)
		}
	}
	return nil
}

// backupRights gives csv-cleaner what manifests/velero gives it (the Role
// in Velero's namespace, the dependents' ClusterRoles), and, as an admin
// does for the kinds the gate names when it blocks Forbidden, list on the
// custom resources of every CRD there is.
func (e *Env) backupRights(ctx context.Context) error {
	role, binding, err := fixtures.ShippedVeleroRole()
	if err != nil {
		return err
	}
	dependents, err := fixtures.ShippedDependentsRoles()
	if err != nil {
		return err
	}
	for _, obj := range append([]client.Object{role, binding}, dependents...) {
		if err := client.IgnoreAlreadyExists(e.Client.Create(ctx, obj)); err != nil {
			return fmt.Errorf("applying manifests/velero: %w", err)
		}
	}
	_, err = fixtures.GrantListOnEveryCRD(ctx, e.Client)
	return err
}

// listOperands lists the instances of set, as the owners of the dependents.
func (e *Env) listOperands(ctx context.Context, set []fixtures.CRD) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	for _, c := range set {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(c.GVK().GroupVersion().WithKind(c.Kind + "List"))
		if err := e.Client.List(ctx, list); err != nil {
			return nil, fmt.Errorf("listing %s: %w", c.Name(), err)
		}
		out = append(out, list.Items...)
	}
	return out, nil
}

// dependentsEach is how many dependents each owner has: a Secret, a
// ConfigMap and a claim.
const dependentsEach = 3

// dependents makes, for each owner, a Secret, a ConfigMap and a claim of
// the CSI StorageClass owned by it (a controller ownerReference), and waits
// until every claim is bound.
func (e *Env) dependents(ctx context.Context, owners []unstructured.Unstructured, set string) error {
	class := cluster.StorageClass
	labels := map[string]string{setLabel: set}
	if err := parallel(ctx, len(owners), func(ctx context.Context, i int) error {
		o := &owners[i]
		ref := []metav1.OwnerReference{{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Name: o.GetName(), UID: o.GetUID(), Controller: &[]bool{true}[0]}}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: dependentName(o, "password"), OwnerReferences: ref, Labels: labels},
			StringData: map[string]string{"password": o.GetName()}}
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: dependentName(o, "data"), OwnerReferences: ref, Labels: labels},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: &class,
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}}
		config := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: dependentName(o, "config"), OwnerReferences: ref, Labels: labels},
			Data: map[string]string{"owner": o.GetName()}}
		for _, obj := range []client.Object{secret, config, pvc} {
			if err := e.Client.Create(ctx, obj); err != nil {
				return fmt.Errorf("creating %s %s/%s: %w", fmt.Sprintf("%T", obj), obj.GetNamespace(), obj.GetName(), err)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	return e.claimsBound(ctx, set, len(owners))
}

// setLabel says which set of owners a dependent belongs to.
const setLabel = "bench.csv-cleaner.io/set"

// dependentName names an owner's dependent: the owner's name and UID (the
// floor's set has the same names in the same namespaces), then what it is.
func dependentName(owner *unstructured.Unstructured, what string) string {
	return owner.GetName() + "-" + string(owner.GetUID())[:8] + "-" + what
}

// claimsBound waits until n claims of set are bound.
func (e *Env) claimsBound(ctx context.Context, set string, n int) error {
	return controlplane.WaitFor(ctx, 10*time.Minute, 500*time.Millisecond, func(ctx context.Context) (bool, error) {
		list := &corev1.PersistentVolumeClaimList{}
		if err := e.Client.List(ctx, list, client.MatchingLabels{setLabel: set}); err != nil {
			return false, err
		}
		bound := 0
		for _, c := range list.Items {
			if c.Status.Phase == corev1.ClaimBound {
				bound++
			}
		}
		return bound >= n, nil
	})
}

// allGone waits until the owners, their claims and the claims' volumes are gone.
func (e *Env) allGone(ctx context.Context, owners []unstructured.Unstructured) error {
	claims := map[string]bool{}
	for _, o := range owners {
		claims[o.GetNamespace()+"/"+dependentName(&o, "data")] = true
	}
	return controlplane.WaitFor(ctx, 10*time.Minute, 500*time.Millisecond, func(ctx context.Context) (bool, error) {
		pvcs, pvs := &corev1.PersistentVolumeClaimList{}, &corev1.PersistentVolumeList{}
		if err := e.Client.List(ctx, pvcs); err != nil {
			return false, err
		}
		if err := e.Client.List(ctx, pvs); err != nil {
			return false, err
		}
		for _, c := range pvcs.Items {
			if claims[c.Namespace+"/"+c.Name] {
				return false, nil
			}
		}
		for _, v := range pvs.Items {
			if r := v.Spec.ClaimRef; r != nil && claims[r.Namespace+"/"+r.Name] {
				return false, nil
			}
		}
		left, err := e.countOwners(ctx, owners)
		return left == 0, err
	})
}

// deleteAll deletes the owners, their Secrets, ConfigMaps and claims, and waits until
// they and the claims' volumes are gone.
func (e *Env) deleteAll(ctx context.Context, owners []unstructured.Unstructured) error {
	if err := parallel(ctx, len(owners), func(ctx context.Context, i int) error {
		o := &owners[i]
		for _, obj := range []client.Object{o.DeepCopy(),
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: dependentName(o, "password")}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: dependentName(o, "config")}},
			&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: dependentName(o, "data")}}} {
			if err := client.IgnoreNotFound(e.Client.Delete(ctx, obj)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	return e.allGone(ctx, owners)
}

// countOwners counts the owners that are there.
func (e *Env) countOwners(ctx context.Context, owners []unstructured.Unstructured) (int, error) {
	n := 0
	for i := range owners {
		o := owners[i].DeepCopy()
		if err := e.Client.Get(ctx, client.ObjectKeyFromObject(o), o); client.IgnoreNotFound(err) != nil {
			return 0, err
		} else if err == nil {
			n++
		}
	}
	return n, nil
}

// resourcesOf are the resources (plural.group) of set.
func resourcesOf(set []fixtures.CRD) []string {
	out := make([]string, len(set))
	for i, c := range set {
		out[i] = c.Plural + "." + c.Group
	}
	return out
}

// veleroRestore restores everything the Backup holds but the cluster
// RBAC and webhook configurations (Velero's own Restore, as `velero restore
// create --from-backup` does), and times it from its creation to Completed
// with its claims bound, what the undo checks before it ends.
func (e *Env) veleroRestore(ctx context.Context, backup string, claims int) (time.Duration, error) {
	excluded := make([]any, len(undoplan.Excluded))
	for i, r := range undoplan.Excluded {
		excluded[i] = r
	}
	r := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"backupName": backup, "excludedResources": excluded, "restorePVs": true}}}
	r.SetGroupVersionKind(veleroBackupKind.GroupVersion().WithKind("Restore"))
	r.SetNamespace(cluster.VeleroNamespace)
	r.SetName(backup + "-by-hand")
	start := time.Now()
	if err := e.Client.Create(ctx, r); err != nil {
		return 0, fmt.Errorf("creating Velero's Restore %s: %w", r.GetName(), err)
	}
	var phase string
	if err := controlplane.WaitFor(ctx, veleroWait, 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := e.Client.Get(ctx, client.ObjectKeyFromObject(r), r); err != nil {
			return false, err
		}
		phase, _, _ = unstructured.NestedString(r.Object, "status", "phase")
		return phase == "Completed" || phase == "PartiallyFailed" || phase == "Failed" || phase == "FailedValidation", nil
	}); err != nil {
		return 0, fmt.Errorf("waiting for Velero's Restore %s: %w", r.GetName(), err)
	}
	if phase != "Completed" {
		return time.Since(start), fmt.Errorf("velero's Restore %s is %s (see velero.log)", r.GetName(), phase)
	}
	// What a person checks next: every claim bound to its volume again.
	// Velero's Restore waits for it only for the claims whose
	// PersistentVolume the Backup holds; the undo waits for all.
	if err := e.restoredClaimsBound(ctx, backup, claims); err != nil {
		return time.Since(start), err
	}
	return time.Since(start), nil
}

// restoredClaimsBound waits until the claims restored from backup (Velero's
// label velero.io/backup-name) are n and all bound.
func (e *Env) restoredClaimsBound(ctx context.Context, backup string, n int) error {
	var bound, seen int
	err := controlplane.WaitFor(ctx, veleroWait, 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		list := &corev1.PersistentVolumeClaimList{}
		if err := e.Client.List(ctx, list, client.MatchingLabels{"velero.io/backup-name": backup}); err != nil {
			return false, err
		}
		bound, seen = 0, len(list.Items)
		for _, pvc := range list.Items {
			if pvc.Status.Phase == corev1.ClaimBound {
				bound++
			}
		}
		return seen >= n && bound == seen, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the %d claims Velero restored from %s to be bound (%d of %d seen bound): %w", n, backup, bound, seen, err)
	}
	return nil
}

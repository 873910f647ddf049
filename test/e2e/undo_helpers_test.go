//go:build e2e

package e2e_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// skipUnlessLocalVelero skips a spec that needs the harness's own Velero,
// which runs only beside the local cluster.
func skipUnlessLocalVelero() {
	if !kc.Local() {
		Skip("the harness runs its own Velero beside the local cluster")
	}
}

// startCSI starts the CSI stack for the rest of the spec.
func startCSI(ctx context.Context) *cluster.CSI {
	GinkgoHelper()
	csi, err := kc.StartCSI(ctx)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(csi.Stop()).To(Succeed()) })
	return csi
}

// startVeleroCSI starts Velero with its CSI snapshots for the rest of the
// spec, once the operator is installed and the CSI stack runs.
func startVeleroCSI(ctx context.Context) *cluster.Velero {
	GinkgoHelper()
	velero, err := kc.StartVeleroCSI(ctx)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(velero.Stop()).To(Succeed()) })
	return velero
}

// data is what a database operand's dependents hold, as a user would check
// it after an undo: its Secret's and ConfigMap's data, and the sha256 of
// every file of its volume.
type data struct {
	secret map[string][]byte
	config map[string]string
	volume map[string]string
}

// dependentKeys are the dependents a database operand called name owns.
func dependentKeys(ns, name string) (secret, config, claim client.ObjectKey) {
	return client.ObjectKey{Namespace: ns, Name: name + "-password"}, client.ObjectKey{Namespace: ns, Name: name + "-config"},
		client.ObjectKey{Namespace: ns, Name: name + "-data"}
}

// withDependents makes what an operator of databases makes for the operand
// owner, each with a controller ownerReference to it: a Secret with a
// generated password, a ConfigMap, and a claim holding bytes
// (claimWithBytes).
func withDependents(ctx context.Context, csi *cluster.CSI, owner *unstructured.Unstructured) data {
	GinkgoHelper()
	ref := metav1.OwnerReference{APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Name: owner.GetName(), UID: owner.GetUID(),
		Controller: new(bool), BlockOwnerDeletion: new(bool)}
	*ref.Controller, *ref.BlockOwnerDeletion = true, true
	secretKey, configKey, claimKey := dependentKeys(owner.GetNamespace(), owner.GetName())
	password := make([]byte, 24)
	_, _ = rand.Read(password)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretKey.Namespace, Name: secretKey.Name, OwnerReferences: []metav1.OwnerReference{ref}},
		Data: map[string][]byte{"password": password}}
	Expect(kc.Client.Create(ctx, secret)).To(Succeed())
	config := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: configKey.Namespace, Name: configKey.Name, OwnerReferences: []metav1.OwnerReference{ref}},
		Data: map[string]string{"postgresql.conf": "max_connections = " + owner.GetName()}}
	Expect(kc.Client.Create(ctx, config)).To(Succeed())
	return data{secret: secret.Data, config: config.Data, volume: claimWithBytes(ctx, csi, claimKey, ref)}
}

// claimWithBytes makes a claim of the CSI StorageClass owned through refs,
// waits until it is bound, and writes 64 KiB of random bytes and a file
// through its volume's folder, as a database would; it returns the sha256
// of every file of the volume.
func claimWithBytes(ctx context.Context, csi *cluster.CSI, key client.ObjectKey, refs ...metav1.OwnerReference) map[string]string {
	GinkgoHelper()
	class := cluster.StorageClass
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, OwnerReferences: refs},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: &class,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}}
	Expect(kc.Client.Create(ctx, pvc)).To(Succeed())
	var dir string
	Eventually(func(ctx context.Context) (err error) {
		dir, err = csi.VolumePath(ctx, key.Namespace, key.Name)
		return err
	}).WithContext(ctx).Should(Succeed(), "claim %s is bound to a volume of the CSI driver (see csi-provisioner.log)", key)
	random := make([]byte, 64<<10)
	_, _ = rand.Read(random)
	Expect(os.MkdirAll(filepath.Join(dir, "pgdata"), 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, "pgdata", "base.bin"), random, 0o644)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, "PG_VERSION"), []byte("17\n"), 0o644)).To(Succeed())
	return volumeSums(dir)
}

// volumeSums are the sha256 of every file under dir, by path.
func volumeSums(dir string) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	Expect(filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})).To(Succeed())
	return out
}

// dataOf reads back what the operand's dependents hold now: the claim must
// be bound to a volume of the CSI driver.
func dataOf(ctx context.Context, csi *cluster.CSI, ns, name string) data {
	GinkgoHelper()
	secretKey, configKey, claimKey := dependentKeys(ns, name)
	secret, config := &corev1.Secret{}, &corev1.ConfigMap{}
	Expect(kc.Client.Get(ctx, secretKey, secret)).To(Succeed())
	Expect(kc.Client.Get(ctx, configKey, config)).To(Succeed())
	dir, err := csi.VolumePath(ctx, claimKey.Namespace, claimKey.Name)
	Expect(err).NotTo(HaveOccurred())
	return data{secret: secret.Data, config: config.Data, volume: volumeSums(dir)}
}

// dependentsGone reports whether none of the operand's dependents is left.
func dependentsGone(ctx context.Context, ns, name string) bool {
	secretKey, configKey, claimKey := dependentKeys(ns, name)
	for _, o := range []struct {
		key client.ObjectKey
		obj client.Object
	}{{secretKey, &corev1.Secret{}}, {configKey, &corev1.ConfigMap{}}, {claimKey, &corev1.PersistentVolumeClaim{}}} {
		if err := kc.Client.Get(ctx, o.key, o.obj); err == nil || client.IgnoreNotFound(err) != nil {
			return false
		}
	}
	return true
}

// undo runs `csv-cleaner undo` with args, as a user would, and returns
// what it printed and its exit code.
func undo(ctx context.Context, args ...string) (string, int) {
	GinkgoHelper()
	cmd := exec.CommandContext(ctx, cleaner.Binary(), append([]string{"undo", "--kubeconfig", kc.Kubeconfig}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode()
	case err != nil:
		Fail("running csv-cleaner undo: " + err.Error())
	}
	AddReportEntry("csv-cleaner undo "+strings.Join(args, " "), out.String())
	return out.String(), 0
}

// undos are the Undo objects of the uninstall of CSV namespace/name (other
// specs' Undos share the cluster: an Undo is cluster-scoped).
func undos(ctx context.Context, namespace, name string) []cleanupv1alpha1.Undo {
	GinkgoHelper()
	list := &cleanupv1alpha1.UndoList{}
	Expect(kc.Client.List(ctx, list)).To(Succeed())
	var out []cleanupv1alpha1.Undo
	for _, u := range list.Items {
		if u.Spec.Uninstall.Namespace == namespace && u.Spec.Uninstall.Name == name {
			out = append(out, u)
		}
	}
	return out
}

// restores counts Velero's Restores of the Backup called backup (other specs' Restores share Velero's namespace).
func restores(ctx context.Context, backup string) int {
	GinkgoHelper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "RestoreList"})
	Expect(kc.Client.List(ctx, list, client.InNamespace(cluster.VeleroNamespace))).To(Succeed())
	n := 0
	for _, r := range list.Items {
		if name, _, _ := unstructured.NestedString(r.Object, "spec", "backupName"); name == backup {
			n++
		}
	}
	return n
}

// gcWatches waits until the garbage collector watches crd's kind, before a
// spec makes operands that own dependents: a probe deleted with
// propagationPolicy Orphan goes only once the collector has seen it through
// a watch of its kind, which starts at the collector's next discovery
// resync (every 30 s) after the CRD appears. An operand deleted before
// then, its CRD deleted soon after (crds: Delete), leaves its dependents
// for good: the collector can no longer map their owner's kind.
func gcWatches(ctx context.Context, crd fixtures.CRD, ns string) {
	GinkgoHelper()
	probe := fixtures.Operand(crd, ns, "gc-probe")
	Expect(kc.Client.Create(ctx, probe)).To(Succeed())
	Expect(kc.Client.Delete(ctx, probe, client.PropagationPolicy(metav1.DeletePropagationOrphan))).To(Succeed())
	Eventually(func(ctx context.Context) bool {
		return apierrors.IsNotFound(kc.Client.Get(ctx, client.ObjectKeyFromObject(probe), probe))
	}).WithContext(ctx).WithTimeout(2*time.Minute).Should(BeTrue(), "the garbage collector orphans the probe of %s", crd.GVK().Kind)
}

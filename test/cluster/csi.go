package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/csidriver"
)

// The CSI stack's names: its driver, and the StorageClass and
// VolumeSnapshotClass (labelled for Velero) of that driver.
const (
	CSIDriverName = "hostpath.csi.csv-cleaner.io"
	StorageClass  = "csv-cleaner-hostpath"
	SnapshotClass = "csv-cleaner-hostpath"
)

// CSI is a CSI stack beside the local cluster: the tests' own driver
// (test/csidriver, served from this process on a Unix socket), and as
// processes external-provisioner (which makes a volume for each claim of
// its StorageClass, and one from a snapshot), csi-snapshotter and the
// snapshot controller (which take a VolumeSnapshot); with
// external-snapshotter's CRDs, a StorageClass with immediate binding and
// a VolumeSnapshotClass that Velero picks. kube-controller-manager's
// binder binds the claims.
type CSI struct {
	c      *Cluster
	Driver *csidriver.Driver
	procs  []*controlplane.Process
	dir    string
}

var snapshotClassKind = schema.GroupVersionKind{Group: "snapshot.storage.k8s.io", Version: "v1", Kind: "VolumeSnapshotClass"}

// StartCSI starts the CSI stack, once external-snapshotter's CRDs are
// installed (the snapshot controller waits 30 s for them and exits).
func (c *Cluster) StartCSI(ctx context.Context) (*CSI, error) {
	for _, b := range []string{"csi-provisioner", "csi-snapshotter", "snapshot-controller"} {
		if _, err := os.Stat(filepath.Join(c.BinDir, b)); err != nil {
			return nil, fmt.Errorf("%s is missing from %s: run 'make backup-tools' first: %w", b, c.BinDir, err)
		}
	}
	paths, err := controlplane.SnapshotCRDs()
	if err != nil {
		return nil, err
	}
	if _, err := envtest.InstallCRDs(c.Config, envtest.CRDInstallOptions{Paths: paths}); err != nil {
		return nil, fmt.Errorf("installing external-snapshotter's CRDs: %w", err)
	}
	dir, err := os.MkdirTemp("", "csv-cleaner-csi-")
	if err != nil {
		return nil, err
	}
	s := &CSI{c: c, dir: dir}
	if s.Driver, err = csidriver.Start(CSIDriverName, filepath.Join(dir, "csi.sock"), filepath.Join(dir, "state")); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	// Their clients' default rate, 5 requests a second, would take minutes
	// over a thousand claims: the benchmarks make that many.
	common := []string{"--kubeconfig=" + c.Kubeconfig, "--leader-election=false", "--retry-interval-max=5s", "--kube-api-qps=200", "--kube-api-burst=400"}
	socket := "--csi-address=" + s.Driver.Socket
	for _, p := range []struct {
		name string
		args []string
	}{
		{"csi-provisioner", append([]string{socket, "--timeout=30s", "--extra-create-metadata"}, common...)},
		{"csi-snapshotter", append([]string{socket, "--timeout=30s", "--worker-threads=50"}, common...)},
		{"snapshot-controller", append([]string{"--worker-threads=50"}, common...)},
	} {
		proc, err := controlplane.StartProcess(p.name, filepath.Join(c.BinDir, p.name), p.args, nil, c.LogDir)
		if err != nil {
			return nil, errors.Join(err, s.Stop())
		}
		s.procs = append(s.procs, proc)
	}
	if err := s.classes(ctx); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	return s, nil
}

// classes creates the StorageClass and the VolumeSnapshotClass of the driver.
func (s *CSI) classes(ctx context.Context) error {
	immediate := storagev1.VolumeBindingImmediate
	reclaim := corev1.PersistentVolumeReclaimDelete
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: StorageClass}, Provisioner: CSIDriverName,
		ReclaimPolicy: &reclaim, VolumeBindingMode: &immediate}
	if err := client.IgnoreAlreadyExists(s.c.Client.Create(ctx, sc)); err != nil {
		return fmt.Errorf("creating StorageClass %s: %w", StorageClass, err)
	}
	vsc := &unstructured.Unstructured{Object: map[string]any{"driver": CSIDriverName, "deletionPolicy": "Delete"}}
	vsc.SetGroupVersionKind(snapshotClassKind)
	vsc.SetName(SnapshotClass)
	vsc.SetLabels(map[string]string{decide.SnapshotClassLabel: "true"})
	// The CRD was just installed: its kind may take a moment to be served.
	return controlplane.WaitFor(ctx, time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		err := s.c.Client.Create(ctx, vsc.DeepCopy())
		return err == nil || apierrors.IsAlreadyExists(err), nil
	})
}

// VolumePath is the folder holding the files of the volume a bound claim
// uses, read through its PersistentVolume's volumeHandle.
func (s *CSI) VolumePath(ctx context.Context, namespace, claim string) (string, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	if err := s.c.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: claim}, pvc); err != nil {
		return "", err
	}
	if pvc.Status.Phase != corev1.ClaimBound {
		return "", fmt.Errorf("claim %s/%s is %s, not Bound", namespace, claim, pvc.Status.Phase)
	}
	pv := &corev1.PersistentVolume{}
	if err := s.c.Client.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); err != nil {
		return "", err
	}
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != CSIDriverName {
		return "", fmt.Errorf("volume %s of claim %s/%s is not one of %s", pv.Name, namespace, claim, CSIDriverName)
	}
	return s.Driver.VolumePath(pv.Spec.CSI.VolumeHandle), nil
}

// Stop stops the sidecars and the driver; their state goes with them.
func (s *CSI) Stop() error {
	var errs []error
	for i := len(s.procs) - 1; i >= 0; i-- {
		// The sidecars exit with the signal's status on SIGTERM: that says
		// nothing here; one still running after the wait is killed.
		_ = s.procs[i].Stop(10 * time.Second)
	}
	if s.Driver != nil {
		s.Driver.Stop()
	}
	if os.Getenv("KEEP_CONTROL_PLANE_LOGS") == "" {
		errs = append(errs, os.RemoveAll(s.dir))
	}
	return errors.Join(errs...)
}

package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// Backup is the backup gate's cost: an uninstall under a policy's backup
// against what its two parts cost alone.
type Backup struct {
	Operands int
	// Uninstall runs from the extension's deletion to the release of
	// csv-cleaner's finalizer: the Backup made, waited on and verified,
	// then every resource deleted.
	Uninstall time.Duration
	// Floor is the per-object floor on an identical set.
	Floor time.Duration
	// Velero is Velero's own Backup of the same resources, made by hand:
	// from its creation until it says Completed (polled every 50 ms).
	Velero time.Duration
	// Gate is the uninstall's own Backup, made by csv-cleaner: from when
	// the benchmark saw it created until it saw it Completed (polled every
	// 50 ms). Velero's time for the same objects varies by a second or
	// more from one Backup to the next; this one is the one waited on.
	Gate time.Duration
	// Items is how many objects Velero's Backup of the uninstall held.
	Items int32
}

// Ratio is the uninstall's time over the floor and the uninstall's own
// Backup together: what csv-cleaner adds to what the two cost.
func (b Backup) Ratio() float64 { return b.Uninstall.Seconds() / (b.Floor + b.Gate).Seconds() }

// ReferenceRatio is the same over the floor and the Backup made by hand.
func (b Backup) ReferenceRatio() float64 {
	return b.Uninstall.Seconds() / (b.Floor + b.Velero).Seconds()
}

// Added is what the gate adds to the floor and its own Backup.
func (b Backup) Added() time.Duration { return b.Uninstall - b.Floor - b.Gate }

var veleroBackupKind = schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "Backup"}

// MeasureBackup times an uninstall under backup.velero, with real Velero,
// to the release, against the per-object floor on an identical set: the
// workload of MeasureExtension, Velero backing up its resources on its own
// first. docs/benchmarks.md says how.
func (e *Env) MeasureBackup(ctx context.Context, n int) (Backup, error) {
	res := Backup{Operands: n}
	id := fmt.Sprintf("backup%d", n)
	cleaner, err := e.StartCleaner(ctx, "csv-cleaner-backup-"+strconv.Itoa(n))
	if err != nil {
		return res, err
	}
	defer func() { _ = cleaner.Stop(30 * time.Second) }()
	w, err := e.extensionWorkload(ctx, id, n, func(p *cleanupv1alpha1.CleanupPolicySpec) {
		p.Backup = &cleanupv1alpha1.BackupSpec{Velero: &cleanupv1alpha1.VeleroBackup{Namespace: cluster.VeleroNamespace}}
	})
	if err != nil {
		return res, err
	}

	// Velero, once the CRDs exist: it learns the API server's kinds at its start.
	kc := e.harness()
	velero, err := kc.StartVelero(ctx)
	if err != nil {
		return res, err
	}
	defer func() { _ = velero.Stop() }()
	if err := e.backupRights(ctx); err != nil {
		return res, err
	}

	// The gate's Backup of a ClusterExtension: its resources in every namespace.
	if res.Velero, err = e.veleroBackupOf(ctx, "reference-"+id, []string{decide.EveryNamespace}, resourcesOf(w.ext.CRDs), ""); err != nil {
		return res, err
	}
	if res.Floor, err = e.perObjectFloor(ctx, w.floor); err != nil {
		return res, err
	}
	var rec *cleanupv1alpha1.ExtensionCleanup
	if res.Uninstall, res.Gate, rec, err = e.gatedUninstall(ctx, w); err != nil {
		return res, err
	}
	if b := rec.Status.Backup; b == nil || !b.Verified || int(b.Planned) != n {
		return res, fmt.Errorf("the record's backup is %+v, want a verified Backup of %d resources", b, n)
	}
	res.Items = rec.Status.Backup.Items
	return res, e.removeExtensionWorkload(ctx, w)
}

// harness is test/cluster's view of the benchmarks' control plane, to
// start Velero and the CSI stack beside it.
func (e *Env) harness() *cluster.Cluster {
	return &cluster.Cluster{Config: e.CP.Config, Kubeconfig: e.CP.Kubeconfig, Client: e.Client, LogDir: e.LogDir,
		BinDir: filepath.Join(controlplane.RepoRoot(), "bin")}
}

// gatedUninstall deletes the workload's extension and times its
// uninstall, from the delete to csv-cleaner's release, and the uninstall's
// own Backup (timeBackup); it returns them with the completed record.
func (e *Env) gatedUninstall(ctx context.Context, w *extensionWorkload) (uninstall, gate time.Duration, _ *cleanupv1alpha1.ExtensionCleanup, _ error) {
	released, err := e.watchReleased(ctx, w.id)
	if err != nil {
		return 0, 0, nil, err
	}
	timeGate := e.timeBackup(ctx, decide.BackupName(ocv1.ClusterExtensionKind, "", w.id, w.objs.Extension.GetUID(), 1))
	fixtures.WaitNextSecond(time.Now())
	start := time.Now()
	if err := e.Client.Delete(ctx, w.objs.Extension); err != nil {
		return 0, 0, nil, fmt.Errorf("deleting ClusterExtension %s: %w", w.id, err)
	}
	select {
	case <-released:
	case <-ctx.Done():
		return 0, 0, nil, fmt.Errorf("waiting for ClusterExtension %s to be released: %w", w.id, ctx.Err())
	}
	uninstall = time.Since(start)
	if gate, err = timeGate(); err != nil {
		return uninstall, 0, nil, err
	}
	rec, err := e.extensionCompleted(ctx, w.id)
	return uninstall, gate, rec, err
}

// veleroWait is how long the harness waits for one of Velero's Backups or
// Restores: with a single item-block worker, 1,000 claims take one CSI
// snapshot after another.
const veleroWait = 45 * time.Minute

// veleroBackupOf makes a Backup of resources (plural.group) in namespaces,
// as a person does with `velero backup create`, and times it from its
// creation to Completed. notSet, when set, leaves out the objects labelled
// as that set (setLabel); excluded are left out even as another item's.
func (e *Env) veleroBackupOf(ctx context.Context, name string, namespaces, of []string, notSet string, excluded ...string) (time.Duration, error) {
	var resources, included, left []any
	for _, r := range of {
		resources = append(resources, r)
	}
	for _, ns := range namespaces {
		included = append(included, ns)
	}
	for _, r := range excluded {
		left = append(left, r)
	}
	spec := map[string]any{"includedResources": resources, "includedNamespaces": included}
	if len(left) > 0 {
		spec["excludedResources"] = left
	}
	if notSet != "" {
		spec["labelSelector"] = map[string]any{"matchExpressions": []any{
			map[string]any{"key": setLabel, "operator": "NotIn", "values": []any{notSet}}}}
	}
	b := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	b.SetGroupVersionKind(veleroBackupKind)
	b.SetNamespace(cluster.VeleroNamespace)
	b.SetName(name)
	start := time.Now()
	if err := e.Client.Create(ctx, b); err != nil {
		return 0, fmt.Errorf("creating Velero's Backup %s: %w", name, err)
	}
	var phase string
	if err := controlplane.WaitFor(ctx, veleroWait, 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := e.Client.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
			return false, err
		}
		phase, _, _ = unstructured.NestedString(b.Object, "status", "phase")
		return phase == decide.BackupPhaseCompleted || phase == decide.BackupPhaseFailed || phase == decide.BackupPhasePartiallyFailed || phase == decide.BackupPhaseFailedValidation, nil
	}); err != nil {
		return 0, fmt.Errorf("waiting for Velero's Backup %s: %w", name, err)
	}
	took := time.Since(start)
	if phase != decide.BackupPhaseCompleted {
		return took, fmt.Errorf("velero's Backup %s is %s (see velero.log)", name, phase)
	}
	return took, nil
}

// timeBackup polls, every 50 ms, for the Backup called name and returns a
// function that waits for it to be Completed and says how long it took
// from when it was first seen.
func (e *Env) timeBackup(ctx context.Context, name string) func() (time.Duration, error) {
	type result struct {
		took time.Duration
		err  error
	}
	done := make(chan result, 1)
	go func() {
		b := &unstructured.Unstructured{}
		b.SetGroupVersionKind(veleroBackupKind)
		var seen time.Time
		err := controlplane.WaitFor(ctx, veleroWait, 50*time.Millisecond, func(ctx context.Context) (bool, error) {
			if err := e.Client.Get(ctx, client.ObjectKey{Namespace: cluster.VeleroNamespace, Name: name}, b); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			if seen.IsZero() {
				seen = time.Now()
			}
			phase, _, _ := unstructured.NestedString(b.Object, "status", "phase")
			return phase == decide.BackupPhaseCompleted, nil
		})
		done <- result{time.Since(seen), err}
	}()
	return func() (time.Duration, error) {
		r := <-done
		if r.err != nil {
			return 0, fmt.Errorf("timing the uninstall's Backup %s: %w", name, r.err)
		}
		return r.took, nil
	}
}

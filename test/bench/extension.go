package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// MeasureExtension times a ClusterExtension's uninstall by a csv-cleaner of
// its own, from the extension's deletion to the release (crds: Orphan),
// against the per-object floor on an identical set that nobody owns: n
// custom resources of 3 CRDs over 100 namespaces each.
func (e *Env) MeasureExtension(ctx context.Context, n int) (Throughput, error) {
	res := Throughput{Operands: n}
	id := fmt.Sprintf("ext%d", n)
	cleaner, err := e.StartCleaner(ctx, "csv-cleaner-extension-"+strconv.Itoa(n))
	if err != nil {
		return res, err
	}
	defer func() { _ = cleaner.Stop(30 * time.Second) }()
	w, err := e.extensionWorkload(ctx, id, n, nil)
	if err != nil {
		return res, err
	}
	objs, floorCRDs := w.objs, w.floor

	meter, err := e.cpuMeter(cleaner)
	if err != nil {
		return res, err
	}
	res.FloorCPU, err = meter.during(func() (err error) {
		res.Floor, err = e.perObjectFloor(ctx, floorCRDs)
		return err
	})
	if err != nil {
		return res, err
	}
	released, err := e.watchReleased(ctx, id)
	if err != nil {
		return res, err
	}
	// Resources created in the deletion's second would be kept (CreatedAfterDeletion).
	fixtures.WaitNextSecond(time.Now())
	res.UninstallCPU, err = meter.during(func() error {
		start := time.Now()
		if err := e.Client.Delete(ctx, objs.Extension); err != nil {
			return fmt.Errorf("deleting ClusterExtension %s: %w", id, err)
		}
		select {
		case <-released:
		case <-ctx.Done():
			return fmt.Errorf("waiting for ClusterExtension %s to be released: %w", id, ctx.Err())
		}
		res.Uninstall = time.Since(start)
		return nil
	})
	if err != nil {
		return res, err
	}
	// The record says Completed (and the metric counts it) right after the release.
	if _, err := e.extensionCompleted(ctx, id); err != nil {
		return res, err
	}
	m, err := cleaner.ScrapeCounted(ctx, "csv_cleaner_uninstalls_total", map[string]string{"kind": "ClusterExtension", "result": "completed"}, 1)
	if err != nil {
		return res, err
	}
	res.PeakInflight = m.Sum("csv_cleaner_client_requests_in_flight_max", nil)
	if res.PeakRSSMiB, err = cleaner.PeakRSSMiB(); err != nil {
		return res, err
	}
	if refused := m.Sum("rest_client_requests_total", map[string]string{"code": "403"}); refused > 0 {
		return res, fmt.Errorf("kube-apiserver refused %.0f of csv-cleaner's requests: manifests/rbac/role.yaml lacks a permission (see its log)", refused)
	}
	return res, e.removeExtensionWorkload(ctx, w)
}

// extensionWorkload is the ClusterExtension workload of the throughput
// benchmarks: a policy selecting extension id (policy changes its spec),
// csv-cleaner's rights on its resources, the extension's 3 CRDs with n
// resources over 100 namespaces and an identical set owned by nobody for
// the floor; ready once csv-cleaner holds the extension.
type extensionWorkload struct {
	id    string
	ns    []string
	ext   fixtures.Extension
	objs  fixtures.ExtensionObjects
	floor []fixtures.CRD
}

func (e *Env) extensionWorkload(ctx context.Context, id string, n int, policy func(*cleanupv1alpha1.CleanupPolicySpec)) (*extensionWorkload, error) {
	ns, err := e.namespaces(ctx, "bench-target", targetNamespaces)
	if err != nil {
		return nil, err
	}
	w := &extensionWorkload{id: id, ns: ns, floor: crds(id + "-floor"),
		ext: fixtures.Extension{Name: id, Namespace: id, CRDs: crds(id), Labels: map[string]string{"bench": id}}}
	p := &cleanupv1alpha1.CleanupPolicy{ObjectMeta: metav1.ObjectMeta{Name: id}}
	p.Spec.ClusterExtensionSelector = &metav1.LabelSelector{MatchLabels: w.ext.Labels}
	if policy != nil {
		policy(&p.Spec)
	}
	if err := e.Client.Create(ctx, p); err != nil {
		return nil, fmt.Errorf("creating CleanupPolicy %s: %w", id, err)
	}
	if err := e.operandRights(ctx, id, w.ext.CRDs); err != nil {
		return nil, err
	}
	if w.objs, err = w.ext.Create(ctx, e.Client); err != nil {
		return nil, err
	}
	for _, c := range w.floor {
		if err := fixtures.CreateCRD(ctx, e.Client, fixtures.Install{}.CRDObject(c)); err != nil {
			return nil, err
		}
	}
	for _, set := range [][]fixtures.CRD{w.ext.CRDs, w.floor} {
		if err := e.operands(ctx, set, ns, n); err != nil {
			return nil, err
		}
	}
	return w, e.held(ctx, id)
}

// held waits until csv-cleaner holds the ClusterExtension id (its finalizer).
func (e *Env) held(ctx context.Context, id string) error {
	if err := controlplane.WaitFor(ctx, 2*time.Minute, 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		got := &ocv1.ClusterExtension{}
		if err := e.Client.Get(ctx, client.ObjectKey{Name: id}, got); err != nil {
			return false, err
		}
		return slices.Contains(got.Finalizers, decide.DefaultFinalizer), nil
	}); err != nil {
		return fmt.Errorf("waiting for csv-cleaner's finalizer on ClusterExtension %s: %w", id, err)
	}
	return nil
}

// extensionCompleted waits for the extension's record to say Completed.
func (e *Env) extensionCompleted(ctx context.Context, id string) (*cleanupv1alpha1.ExtensionCleanup, error) {
	rec := &cleanupv1alpha1.ExtensionCleanup{}
	if err := controlplane.WaitFor(ctx, time.Minute, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		err := e.Client.Get(ctx, client.ObjectKey{Name: id}, rec)
		return err == nil && rec.Status.Phase == cleanupv1alpha1.PhaseCompleted, client.IgnoreNotFound(err)
	}); err != nil {
		return nil, fmt.Errorf("waiting for the ExtensionCleanup %s to say Completed: %w", id, err)
	}
	return rec, nil
}

// removeExtensionWorkload checks that no resource of the extension is left
// and removes what the workload made: operator-controller's own finalizers
// go once csv-cleaner's has, then the CRDs.
func (e *Env) removeExtensionWorkload(ctx context.Context, w *extensionWorkload) error {
	left, err := e.count(ctx, w.ext.CRDs)
	if err != nil {
		return fmt.Errorf("counting the resources left: %w", err)
	}
	if left > 0 {
		return fmt.Errorf("%d resources left after the uninstall", left)
	}
	if err := e.Client.Patch(ctx, w.objs.Extension, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing operator-controller's finalizers from ClusterExtension %s: %w", w.id, err)
	}
	for _, c := range slices.Concat(w.ext.CRDs, w.floor) {
		if err := e.Client.Delete(ctx, fixtures.Install{}.CRDObject(c)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting CRD %s: %w", c.Name(), err)
		}
	}
	return nil
}

// operandRights grants csv-cleaner its rights on the extension's custom
// resources as the README says for OLM v1, which makes no per-CRD roles: a
// ClusterRole labelled cleanup.csv-cleaner.io/aggregate-to-operands, which
// kube-controller-manager aggregates into csv-cleaner-operands.
func (e *Env) operandRights(ctx context.Context, id string, set []fixtures.CRD) error {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "csv-cleaner-operands-" + id,
		Labels: map[string]string{"cleanup.csv-cleaner.io/aggregate-to-operands": "true"}}}
	for _, c := range set {
		role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{c.Group}, Resources: []string{c.Plural}, Verbs: []string{"list", "delete", "patch"}})
	}
	if err := e.Client.Create(ctx, role); err != nil {
		return fmt.Errorf("creating ClusterRole %s: %w", role.Name, err)
	}
	for _, c := range set {
		if err := fixtures.WaitAggregated(ctx, e.Client, rbac.OperandRole, c.Group, c.Plural); err != nil {
			return fmt.Errorf("waiting for csv-cleaner's rights on %s: %w", c.Name(), err)
		}
	}
	return nil
}

// watchReleased returns a channel closed once the ClusterExtension no
// longer carries csv-cleaner's finalizer (or is gone), seen by a watch,
// which loads kube-apiserver less than polling.
func (e *Env) watchReleased(ctx context.Context, name string) (<-chan struct{}, error) {
	gvr := schema.GroupVersionResource{Group: ocv1.GroupVersion.Group, Version: ocv1.GroupVersion.Version, Resource: "clusterextensions"}
	w, err := e.Dynamic.Resource(gvr).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		return nil, fmt.Errorf("watching ClusterExtension %s: %w", name, err)
	}
	released := make(chan struct{})
	go func() {
		defer w.Stop()
		defer close(released)
		for ev := range w.ResultChan() {
			obj, ok := ev.Object.(metav1.Object)
			if ev.Type == watch.Deleted || ok && !obj.GetDeletionTimestamp().IsZero() && !slices.Contains(obj.GetFinalizers(), decide.DefaultFinalizer) {
				return
			}
		}
		// The server ended the watch first: polling, rarely, finishes the wait.
		_ = controlplane.WaitFor(ctx, 30*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
			got := &ocv1.ClusterExtension{}
			if err := e.Client.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
				return client.IgnoreNotFound(err) == nil, nil
			}
			return !got.DeletionTimestamp.IsZero() && !slices.Contains(got.Finalizers, decide.DefaultFinalizer), nil
		})
	}()
	return released, nil
}

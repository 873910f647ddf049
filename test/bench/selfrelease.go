package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// SelfRelease is how fast csv-cleaner, stopped with SIGTERM while its own
// namespace is terminating, removes every finalizer it placed.
type SelfRelease struct {
	// CSVs are the managed CSVs, each with a held ClusterRole and binding.
	CSVs int
	// Objects is how many objects carried a finalizer of csv-cleaner's
	// (the CSVs, their RBAC, its own CSV).
	Objects int
	// Exit: from SIGTERM to the process's exit, every finalizer removed.
	Exit time.Duration
}

// PerSecond is the release rate.
func (s SelfRelease) PerSecond() float64 {
	if s.Exit <= 0 {
		return 0
	}
	return float64(s.Objects) / s.Exit.Seconds()
}

// CSVsWithin is how many managed CSVs (each with a held ClusterRole and
// binding) the measured rate releases within d.
func (s SelfRelease) CSVsWithin(d time.Duration) int {
	return int(s.PerSecond() * d.Seconds() / 3)
}

// selfReleaseID labels the benchmark's CSVs and names its namespaces.
const selfReleaseID = "self-release"

// MeasureSelfRelease times how long csv-cleaner, holding n managed CSVs and
// their RBAC, takes to exit after its namespace is deleted and it gets
// SIGTERM at once, as the kubelet sends it; it fails unless nothing carries a
// finalizer of csv-cleaner's then.
func (e *Env) MeasureSelfRelease(ctx context.Context, n int) (SelfRelease, error) {
	// Its own CSV and its binding of the operand role, which carries its CSV's owner labels, count too.
	res := SelfRelease{CSVs: n, Objects: 3*n + 2}
	self := fixtures.Install{Namespace: selfReleaseID, CSVName: "csv-cleaner.v0.1.0", Targets: []string{""}}
	ns, err := e.namespaces(ctx, "bench-"+selfReleaseID, targetNamespaces)
	if err != nil {
		return res, err
	}
	if err := e.policy(ctx, selfReleaseID); err != nil {
		return res, err
	}
	installs := make([]fixtures.Install, n)
	for i := range installs {
		installs[i] = fixtures.Install{Namespace: ns[i%len(ns)], CSVName: fmt.Sprintf("op-%05d.v1.0.0", i),
			Targets: []string{ns[i%len(ns)]}, Labels: map[string]string{"bench": selfReleaseID}}
	}
	if err := parallel(ctx, n, func(ctx context.Context, i int) error {
		in := installs[i]
		return createAll(ctx, e.Client, in.CSV(), fixtures.OwnedClusterRole(in.CSVName, in.Key()), fixtures.OwnedClusterRoleBinding(in.CSVName, in.Key()))
	}); err != nil {
		return res, fmt.Errorf("creating the managed CSVs: %w", err)
	}
	if err := createAll(ctx, e.Client, fixtures.Namespace(self.Namespace), self.CSV()); err != nil {
		return res, err
	}
	defer e.removeSelfRelease(context.WithoutCancel(ctx), self, installs)

	c, err := e.startCleaner(ctx, "csv-cleaner-self-release",
		[]string{"POD_NAMESPACE=" + self.Namespace, "OPERATOR_CONDITION_NAME=" + self.CSVName})
	if err != nil {
		return res, err
	}
	defer c.Kill()
	if err := controlplane.WaitFor(ctx, 10*time.Minute, 500*time.Millisecond, func(ctx context.Context) (bool, error) {
		held, err := e.heldByCleaner(ctx)
		return held == res.Objects, err
	}); err != nil {
		return res, fmt.Errorf("waiting for csv-cleaner to hold %d objects: %w", res.Objects, err)
	}

	if err := e.Client.Delete(ctx, fixtures.Namespace(self.Namespace)); err != nil {
		return res, fmt.Errorf("deleting csv-cleaner's namespace: %w", err)
	}
	start := time.Now()
	if err := c.Stop(5 * time.Minute); err != nil {
		return res, err
	}
	res.Exit = time.Since(start)
	left, err := e.heldByCleaner(ctx)
	if err != nil {
		return res, err
	}
	if left > 0 {
		return res, fmt.Errorf("%d objects still carry a finalizer of csv-cleaner's after it exited (see %s.log)", left, c.Name)
	}
	return res, nil
}

// heldByCleaner counts the CSVs, ClusterRoles and bindings that carry one of csv-cleaner's finalizers.
func (e *Env) heldByCleaner(ctx context.Context) (int, error) {
	n := 0
	for _, kind := range []struct {
		gvk schema.GroupVersionKind
		fin string
	}{
		{operatorsv1alpha1.SchemeGroupVersion.WithKind("ClusterServiceVersion"), decide.DefaultFinalizer},
		{rbac.ClusterRole, rbac.HoldFinalizer},
		{rbac.ClusterRoleBinding, rbac.HoldFinalizer},
	} {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(kind.gvk.GroupVersion().WithKind(kind.gvk.Kind + "List"))
		if err := e.Client.List(ctx, list); err != nil {
			return 0, fmt.Errorf("listing %s: %w", kind.gvk.Kind, err)
		}
		for _, o := range list.Items {
			if slices.Contains(o.Finalizers, kind.fin) {
				n++
			}
		}
	}
	return n, nil
}

// removeSelfRelease deletes what MeasureSelfRelease created, so that the
// benchmarks after it see none of it.
func (e *Env) removeSelfRelease(ctx context.Context, self fixtures.Install, installs []fixtures.Install) {
	_ = e.Client.Delete(ctx, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "cleanup.csv-cleaner.io/v1alpha1", Kind: "CleanupPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: selfReleaseID}})
	_ = e.Client.Delete(ctx, self.CSV())
	_ = parallel(ctx, len(installs), func(ctx context.Context, i int) error {
		in := installs[i]
		for _, obj := range []client.Object{in.CSV(), fixtures.OwnedClusterRole(in.CSVName, in.Key()), fixtures.OwnedClusterRoleBinding(in.CSVName, in.Key())} {
			_ = e.Client.Delete(ctx, obj)
		}
		return nil
	})
}

// createAll creates the objects in order.
func createAll(ctx context.Context, c client.Client, objs ...client.Object) error {
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %T %s: %w", o, client.ObjectKeyFromObject(o), err)
		}
	}
	return nil
}

package csvcontroller

import (
	"context"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/finalizer"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
	"github.com/csv-cleaner/csv-cleaner/pkg/owninstall"
	"github.com/csv-cleaner/csv-cleaner/pkg/throttle"
)

// Reconciler puts csv-cleaner's finalizer on managed CSVs, holds their
// cluster RBAC, and runs their uninstall on the engine when they are deleted.
type Reconciler struct {
	// Engine runs the uninstalls; its clients are the controller's.
	*cleanup.Engine
	// Life is csv-cleaner's own install: its own CSV is handled apart, and
	// its uninstall releases every CSV.
	Life *owninstall.Life
	// RBACHold is the finalizer that keeps a managed CSV's ClusterRoles and
	// bindings in force until its operands are gone (rbac.HoldName).
	RBACHold string
	// RBACHoldOff turns the hold off: the holds placed before, under RBACHold, are released.
	RBACHoldOff bool

	// written remembers what this process patched from the cache's copies.
	written *finalizer.Written
	// pacer paces the patches that manage or release a CSV that is not
	// being deleted (nil: unpaced); an uninstall's requests are not paced.
	pacer *throttle.Limiter
}

// +kubebuilder:rbac:groups=operators.coreos.com,resources=clusterserviceversions,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=operators.coreos.com,resources=subscriptions;operatorgroups,verbs=get;list
// +kubebuilder:rbac:groups=cleanup.csv-cleaner.io,resources=cleanuppolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=cleanup.csv-cleaner.io,resources=csvcleanups,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=cleanup.csv-cleaner.io,resources=csvcleanups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile is the skeleton both controllers share (cleanup.ReconcileOwner)
// on a CSV: its own CSV is handled apart, and a live one is managed or let
// go as its policy says.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.ReconcileOwner(ctx, csvs{r}, req)
}

// csvs is CSVs as the skeleton asks of them.
type csvs struct{ r *Reconciler }

func (csvs) Record() cleanup.RecordKind { return cleanup.CSVs }
func (csvs) LogKey() string             { return "csv" }

// Gone: a hold left on the CSV's RBAC goes.
func (c csvs) Gone(ctx context.Context, key types.NamespacedName) error {
	return c.r.releaseOrphanedHold(ctx, key)
}

func (c csvs) Fate(ctx context.Context) (decide.SelfFate, string, error) { return c.r.Life.Fate(ctx) }

func (c csvs) Own(_ context.Context, csv *metav1.PartialObjectMetadata) (bool, error) {
	return c.r.Life.IsOwnCSV(csv), nil
}

func (c csvs) Self(ctx context.Context, csv *metav1.PartialObjectMetadata, fate decide.SelfFate, why string) (ctrl.Result, error) {
	return c.r.reconcileSelf(ctx, csv, fate, why)
}

func (c csvs) Policy(ctx context.Context, csv *metav1.PartialObjectMetadata) (*cleanupv1alpha1.CleanupPolicy, error) {
	return c.r.gather().Policy(ctx, csv)
}

func (c csvs) Delete(ctx context.Context, csv *metav1.PartialObjectMetadata, policy *cleanupv1alpha1.CleanupPolicy) (ctrl.Result, error) {
	return c.r.reconcileDelete(ctx, csv, policy)
}

// Manage: managing or letting go of a live CSV is background work,
// thousands of patches at a first start: it yields to the API server's
// other clients.
func (c csvs) Manage(ctx context.Context, csv *metav1.PartialObjectMetadata, policy *cleanupv1alpha1.CleanupPolicy) error {
	ctx = throttle.With(ctx, c.r.pacer)
	if !decide.Managed(policy, csv) {
		return cleanup.InStep("release", c.r.release(ctx, csv))
	}
	return c.r.ensureManaged(ctx, csv)
}

func (c csvs) Release(ctx context.Context, csv *metav1.PartialObjectMetadata) error {
	return c.r.release(ctx, csv)
}

// ensureManaged puts the finalizer on a managed CSV that is not being
// deleted and holds its cluster RBAC, the patches at once: they are
// independent, and a first start on many CSVs waits on their round trips.
// Both work from the cache's copies; what csv-cleaner patched a moment ago
// is read live instead (finalizer.Written), never patched from a stale copy.
func (r *Reconciler) ensureManaged(ctx context.Context, csv client.Object) error {
	var g errgroup.Group
	g.Go(func() error {
		return finalizer.Edit(ctx, r.APIReader, r.Client, r.written, objects.CSVKind, csv, r.Finalizers.Ensure)
	})
	g.Go(func() error { return r.holdRBAC(ctx, csv) })
	return g.Wait()
}

// release lets go of a CSV csv-cleaner does not manage: the RBAC hold, then the finalizer.
func (r *Reconciler) release(ctx context.Context, csv client.Object) error {
	if err := r.releaseRBAC(ctx, objects.Key(csv)); err != nil {
		return err
	}
	return r.patchFinalizers(ctx, csv, r.Finalizers.Remove)
}

// patchFinalizers applies edit to the CSV's finalizers (finalizer.Edit);
// csv is a whole CSV or its metadata.
func (r *Reconciler) patchFinalizers(ctx context.Context, csv client.Object, edit func([]string) ([]string, bool)) error {
	return finalizer.Edit(ctx, r.APIReader, r.Client, nil, objects.CSVKind, csv, edit)
}

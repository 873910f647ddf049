package csv

import (
	"context"
	"errors"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/finalizer"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
	"github.com/csv-cleaner/csv-cleaner/pkg/pace"
	"github.com/csv-cleaner/csv-cleaner/pkg/self"
)

// Reconciler puts csv-cleaner's finalizer on managed CSVs, holds their
// cluster RBAC, and runs their uninstall on the engine when they are deleted.
type Reconciler struct {
	// Engine runs the uninstalls; its clients are the controller's.
	*cleanup.Engine
	// Life is csv-cleaner's own install: its own CSV is handled apart, and
	// its uninstall releases every CSV.
	Life *self.Life
	// RBACHold is the finalizer that keeps a managed CSV's ClusterRoles and
	// bindings in force until its operands are gone (rbac.HoldName).
	RBACHold string
	// RBACHoldOff turns the hold off: the holds placed before, under RBACHold, are released.
	RBACHoldOff bool

	// written remembers what this process patched from the cache's copies.
	written *finalizer.Written
	// pacer paces the patches that manage or release a CSV that is not
	// being deleted (nil: unpaced); an uninstall's requests are not paced.
	pacer *pace.Limiter
}

// +kubebuilder:rbac:groups=operators.coreos.com,resources=clusterserviceversions,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=operators.coreos.com,resources=subscriptions;operatorgroups,verbs=get;list
// +kubebuilder:rbac:groups=cleanup.csv-cleaner.io,resources=cleanuppolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=cleanup.csv-cleaner.io,resources=csvcleanups,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=cleanup.csv-cleaner.io,resources=csvcleanups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile is the skeleton: fetch, guards (the CSV gone, csv-cleaner's own,
// csv-cleaner being uninstalled), the policy, the uninstall of a deleting
// CSV, else the finalizer and the RBAC hold kept right.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.reconcile(ctx, req)
	return r.SettleAttempt(ctx, cleanup.CSVs, req, res, err)
}

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	csv := objects.CSVMetadata()
	if err := r.Client.Get(ctx, req.NamespacedName, csv); err != nil {
		if apierrors.IsNotFound(err) {
			// The CSV is gone: a hold left on its RBAC goes, and a record
			// whose release succeeded without its reply says Completed.
			return ctrl.Result{}, errors.Join(cleanup.InStep("release", r.releaseOrphanedHold(ctx, req.NamespacedName)),
				r.FinishRelease(ctx, cleanup.CSVs, req.NamespacedName, nil))
		}
		return ctrl.Result{}, cleanup.InStep("read", err)
	}
	log := logr.FromContextOrDiscard(ctx).WithValues("csv", klog.KObj(csv))
	ctx = logr.NewContext(ctx, log)

	fate, why, err := r.Life.Fate(ctx)
	if err != nil {
		return ctrl.Result{}, cleanup.InStep("read", err)
	}
	if r.Life.IsOwnCSV(csv) {
		return r.reconcileSelf(ctx, csv, fate, why)
	}
	if fate == decide.SelfUninstalled {
		return ctrl.Result{}, cleanup.InStep("release", r.release(ctx, csv))
	}
	policy, err := r.gather().Policy(ctx, csv)
	if err != nil {
		return ctrl.Result{}, cleanup.InStep("read", err)
	}
	if !csv.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, csv, policy)
	}
	// Managing or letting go of a live CSV is background work, thousands of
	// patches at a first start: it yields to the API server's other clients.
	ctx = pace.With(ctx, r.pacer)
	if !decide.Managed(policy, csv) {
		return ctrl.Result{}, cleanup.InStep("release", r.release(ctx, csv))
	}
	return ctrl.Result{}, cleanup.InStep("manage", r.ensureManaged(ctx, csv))
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

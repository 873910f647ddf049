package cleanup

import (
	"context"
	"errors"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// Controlled is what the reconcile skeleton that both controllers share
// asks of a kind of owner: a controller implements it.
type Controlled interface {
	// Record is the kind of the owner and of its record; LogKey names the
	// owner in log lines ("csv", "clusterExtension").
	Record() RecordKind
	LogKey() string
	// Gone lets go of what an owner that is gone left (the skeleton then
	// finishes its record's release).
	Gone(ctx context.Context, key types.NamespacedName) error
	// Fate is what is happening to csv-cleaner's own install, and why.
	Fate(ctx context.Context) (decide.SelfFate, string, error)
	// Own reports whether the owner installed csv-cleaner; Self reconciles that one.
	Own(ctx context.Context, owner *metav1.PartialObjectMetadata) (bool, error)
	Self(ctx context.Context, owner *metav1.PartialObjectMetadata, fate decide.SelfFate, why string) (ctrl.Result, error)
	// Policy is the CleanupPolicy that manages the owner, nil when none does.
	Policy(ctx context.Context, owner *metav1.PartialObjectMetadata) (*cleanupv1alpha1.CleanupPolicy, error)
	// Delete runs one pass of the uninstall of an owner being deleted.
	Delete(ctx context.Context, owner *metav1.PartialObjectMetadata, policy *cleanupv1alpha1.CleanupPolicy) (ctrl.Result, error)
	// Manage keeps a live owner as its policy says: managed, or let go.
	Manage(ctx context.Context, owner *metav1.PartialObjectMetadata, policy *cleanupv1alpha1.CleanupPolicy) error
	// Release lets go of an owner while csv-cleaner is being uninstalled.
	Release(ctx context.Context, owner *metav1.PartialObjectMetadata) error
}

// ReconcileOwner is the skeleton of a controller of owners: fetch, the
// guards (the owner gone, csv-cleaner's own, csv-cleaner being
// uninstalled), the policy, one pass of the uninstall of an owner being
// deleted, else the owner kept managed or let go. A failed attempt is
// settled (SettleAttempt): tried again after a capped backoff, and shown in
// the record once failures go on.
func (e *Engine) ReconcileOwner(ctx context.Context, c Controlled, req ctrl.Request) (ctrl.Result, error) {
	res, err := e.reconcileOwner(ctx, c, req)
	return e.SettleAttempt(ctx, c.Record(), req, res, err)
}

func (e *Engine) reconcileOwner(ctx context.Context, c Controlled, req ctrl.Request) (ctrl.Result, error) {
	owner := c.Record().subject()
	if err := e.Client.Get(ctx, req.NamespacedName, owner); err != nil {
		if apierrors.IsNotFound(err) {
			// Gone: a record whose release succeeded without its reply says Completed.
			return ctrl.Result{}, errors.Join(InStep("release", c.Gone(ctx, req.NamespacedName)),
				e.FinishRelease(ctx, c.Record(), req.NamespacedName, nil))
		}
		return ctrl.Result{}, InStep("read", err)
	}
	ctx = logr.NewContext(ctx, logr.FromContextOrDiscard(ctx).WithValues(c.LogKey(), klog.KObj(owner)))
	fate, why, err := c.Fate(ctx)
	if err != nil {
		return ctrl.Result{}, InStep("read", err)
	}
	own, err := c.Own(ctx, owner)
	if err != nil {
		return ctrl.Result{}, InStep("read", err)
	}
	if own {
		return c.Self(ctx, owner, fate, why)
	}
	if fate == decide.SelfUninstalled {
		return ctrl.Result{}, InStep("release", c.Release(ctx, owner))
	}
	policy, err := c.Policy(ctx, owner)
	if err != nil {
		return ctrl.Result{}, InStep("read", err)
	}
	if !owner.DeletionTimestamp.IsZero() {
		return c.Delete(ctx, owner, policy)
	}
	return ctrl.Result{}, InStep("manage", c.Manage(ctx, owner, policy))
}

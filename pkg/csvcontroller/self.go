package csvcontroller

import (
	"context"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
	"github.com/csv-cleaner/csv-cleaner/pkg/owninstall"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// reconcileSelf keeps csv-cleaner's finalizer on its own CSV and acts on
// decide.DecideSelf's fate for its deletion: replaced, it releases its own
// CSV and RBAC only; uninstalled, it releases every finalizer it placed and
// its own CSV last. docs/own-uninstall.md says why its own ClusterRoles are
// held and bound twice.
func (r *Reconciler) reconcileSelf(ctx context.Context, own *metav1.PartialObjectMetadata, fate decide.SelfFate, why string) (ctrl.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	switch fate {
	case decide.SelfReplaced:
		if r.Finalizers.HeldBy(own.Finalizers) {
			log.Info("Releasing csv-cleaner's own CSV and its own RBAC only: the version that takes over keeps every other finalizer", "why", why)
			r.Event(own, corev1.EventTypeNormal, "HandedOver", "Upgrade",
				"csv-cleaner releases its own CSV and the hold on its own RBAC, and leaves every other finalizer to the version that takes over: %s", why)
			if err := r.patchFinalizers(ctx, own, r.Finalizers.Remove); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{}, r.Life.ReleaseOwnRBAC(ctx)
	case decide.SelfUninstalled:
		return r.reconcileSelfUninstall(ctx, own, why)
	}
	if err := r.patchFinalizers(ctx, own, r.Finalizers.Ensure); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.holdRBAC(ctx, own); err != nil {
		return ctrl.Result{}, err
	}
	n, err := rbac.EnsureSelfBindings(ctx, r.APIReader, r.Client, objects.Key(own))
	if n > 0 {
		log.Info("Bound csv-cleaner's ServiceAccount to its own ClusterRoles a second time, for its own uninstall", "created", n)
	}
	return ctrl.Result{}, err
}

// reconcileSelfUninstall releases everything, then its own CSV and RBAC.
func (r *Reconciler) reconcileSelfUninstall(ctx context.Context, own *metav1.PartialObjectMetadata, why string) (ctrl.Result, error) {
	if !r.Finalizers.HeldBy(own.Finalizers) {
		// Released already; what is left is the hold on its own RBAC.
		return ctrl.Result{}, r.Life.ReleaseOwnRBAC(ctx)
	}
	settled, err := r.Life.ReleaseOthers(ctx, why)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !settled {
		// A reconcile that started before the deletion may still add one:
		// its own CSV goes only after a pass that finds nothing left.
		return ctrl.Result{RequeueAfter: owninstall.ReleaseAgainAfter}, nil
	}
	r.Event(own, corev1.EventTypeNormal, "FinalizersReleased", "Uninstall",
		"csv-cleaner removed every finalizer it placed on CSVs and cluster RBAC; releasing its own CSV")
	if err := r.patchFinalizers(ctx, own, r.Finalizers.Remove); err != nil {
		return ctrl.Result{}, err
	}
	// Last, its own ClusterRoles and bindings: without them csv-cleaner can
	// do nothing more, and OLM then lets the CSV go.
	return ctrl.Result{}, r.Life.ReleaseOwnRBAC(ctx)
}

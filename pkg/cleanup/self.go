package cleanup

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// isSelf reports whether the CSV is csv-cleaner's own.
func (r *Reconciler) isSelf(csv *operatorsv1alpha1.ClusterServiceVersion) bool {
	return r.Self.Name != "" && csvKey(csv) == r.Self
}

// selfDeleting reports whether csv-cleaner's own CSV is being deleted or
// gone: from then on csv-cleaner places no finalizer and takes off those it
// placed, until OLM's garbage collection stops its pods.
func (r *Reconciler) selfDeleting(ctx context.Context) bool {
	if r.Self.Name == "" {
		return false
	}
	self := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := r.Client.Get(ctx, r.Self, self); err != nil {
		return apierrors.IsNotFound(err)
	}
	return !self.DeletionTimestamp.IsZero()
}

// reconcileSelf keeps csv-cleaner's finalizer on its own CSV, whatever the
// policies say, so that it runs when csv-cleaner is uninstalled: then it
// takes every finalizer it placed off every CSV and every ClusterRole and
// binding, and only when none is left releases its own CSV. Uninstalling
// csv-cleaner therefore never leaves an object stuck on its finalizers;
// uninstalls still under way are abandoned, as the README explains.
func (r *Reconciler) reconcileSelf(ctx context.Context, self *operatorsv1alpha1.ClusterServiceVersion) (ctrl.Result, error) {
	if self.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.patchFinalizers(ctx, self, r.Finalizers.Ensure)
	}
	if !r.Finalizers.HeldBy(self.Finalizers) {
		return ctrl.Result{}, nil
	}
	log := logr.FromContextOrDiscard(ctx)
	log.Info("Removing every finalizer csv-cleaner placed: its own CSV is being deleted")
	if err := r.releaseEverything(ctx); err != nil {
		return ctrl.Result{}, err
	}
	left, err := r.countHeld(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	if left > 0 {
		// A reconcile that started before the deletion may still add one.
		log.Info("Waiting before releasing csv-cleaner's own CSV", "objectsStillHeld", left)
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	r.event(self, corev1.EventTypeNormal, "FinalizersReleased", "Uninstall",
		"csv-cleaner removed every finalizer it placed on CSVs and cluster RBAC; releasing its own CSV")
	return ctrl.Result{}, r.patchFinalizers(ctx, self, r.Finalizers.Remove)
}

// releaseEverything takes csv-cleaner's finalizers off every other CSV and
// its hold off every ClusterRole and binding, read live.
func (r *Reconciler) releaseEverything(ctx context.Context) error {
	csvs := &operatorsv1alpha1.ClusterServiceVersionList{}
	if err := r.APIReader.List(ctx, csvs); err != nil {
		return fmt.Errorf("listing CSVs: %w", err)
	}
	for i := range csvs.Items {
		csv := &csvs.Items[i]
		if r.isSelf(csv) || !r.Finalizers.HeldBy(csv.Finalizers) {
			continue
		}
		if err := r.patchFinalizers(ctx, csv, r.Finalizers.Remove); err != nil {
			return err
		}
	}
	return r.releaseRBACSelected(ctx, r.APIReader, rbac.AnyCSVOwner())
}

// countHeld counts the objects that still carry one of csv-cleaner's finalizers.
func (r *Reconciler) countHeld(ctx context.Context) (int, error) {
	csvs := &operatorsv1alpha1.ClusterServiceVersionList{}
	if err := r.APIReader.List(ctx, csvs); err != nil {
		return 0, fmt.Errorf("listing CSVs: %w", err)
	}
	n := 0
	for i := range csvs.Items {
		if !r.isSelf(&csvs.Items[i]) && r.Finalizers.HeldBy(csvs.Items[i].Finalizers) {
			n++
		}
	}
	rbacHeld, err := r.holder(r.APIReader).Count(ctx, rbac.AnyCSVOwner())
	n += rbacHeld
	if err != nil {
		return n, err
	}
	return n, nil
}

package cleanup

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// isSelf reports whether the CSV is csv-cleaner's own.
func (r *Reconciler) isSelf(csv metav1.Object) bool {
	return r.Self.Name != "" && csvKey(csv) == r.Self
}

// selfDeleting reports whether csv-cleaner's own CSV is being deleted or
// gone: from then on csv-cleaner places no finalizer and takes off those it
// placed, until OLM's garbage collection stops its pods.
func (r *Reconciler) selfDeleting(ctx context.Context) bool {
	if r.Self.Name == "" {
		return false
	}
	self := csvMetadata()
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
//
// OLM deletes csv-cleaner's own ClusterRoles and bindings the moment its CSV
// is deleted, and csv-cleaner needs them to finish: so it holds them like
// any managed operator's, and keeps a binding of its own to each of its
// ClusterRoles (rbac.EnsureSelfBindings) that OLM does not delete. Its own
// ClusterRoles are released last, and the garbage collector then removes
// that binding.
func (r *Reconciler) reconcileSelf(ctx context.Context, self *metav1.PartialObjectMetadata) (ctrl.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	if self.DeletionTimestamp.IsZero() {
		if err := r.patchFinalizers(ctx, self, r.Finalizers.Ensure); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.holdRBAC(ctx, self); err != nil {
			return ctrl.Result{}, err
		}
		n, err := rbac.EnsureSelfBindings(ctx, r.APIReader, r.Client, csvKey(self))
		if n > 0 {
			log.Info("Bound csv-cleaner's ServiceAccount to its own ClusterRoles a second time, for its own uninstall", "created", n)
		}
		return ctrl.Result{}, err
	}
	if !r.Finalizers.HeldBy(self.Finalizers) {
		// Released already; what is left is the hold on its own RBAC.
		err := r.releaseOwnRBAC(ctx, csvKey(self))
		if apierrors.IsForbidden(err) {
			log.Info("csv-cleaner's own rights are gone: its uninstall is over, OLM removes it next")
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	log.Info("Removing every finalizer csv-cleaner placed: its own CSV is being deleted")
	if err := r.releaseEverything(ctx, csvKey(self)); err != nil {
		return ctrl.Result{}, err
	}
	left, err := r.countHeld(ctx, csvKey(self))
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
	if err := r.patchFinalizers(ctx, self, r.Finalizers.Remove); err != nil {
		return ctrl.Result{}, err
	}
	// Last, its own ClusterRoles and bindings: without them csv-cleaner can
	// do nothing more, and OLM then lets the CSV go.
	return ctrl.Result{}, r.releaseOwnRBAC(ctx, csvKey(self))
}

// releaseOwnRBAC releases the hold on csv-cleaner's own ClusterRoles and
// bindings, in the order that keeps its rights until the last one.
func (r *Reconciler) releaseOwnRBAC(ctx context.Context, self types.NamespacedName) error {
	logr.FromContextOrDiscard(ctx).Info("Releasing csv-cleaner's own cluster RBAC, last")
	_, err := r.holder(r.APIReader).ReleaseSelf(ctx, self)
	return holdError(err)
}

// releaseEverything takes csv-cleaner's finalizers off every other CSV and
// its hold off every ClusterRole and binding but its own (self's), read live.
// Copies are listed too: a finalizer placed before the copy was labelled is released.
func (r *Reconciler) releaseEverything(ctx context.Context, self types.NamespacedName) error {
	csvs := csvMetadataList()
	if err := r.APIReader.List(ctx, csvs); err != nil {
		return fmt.Errorf("listing CSVs: %w", err)
	}
	for i := range csvs.Items {
		csv := &csvs.Items[i]
		if r.isSelf(csv) || !r.Finalizers.HeldBy(csv.Finalizers) {
			continue
		}
		csv.TypeMeta = csvMetadata().TypeMeta // a list's items name no kind, a patch needs it
		if err := r.patchFinalizers(ctx, csv, r.Finalizers.Remove); err != nil {
			return err
		}
	}
	n, err := r.holder(r.APIReader).Release(ctx, rbac.AnyCSVOwner(), self)
	if n > 0 {
		logr.FromContextOrDiscard(ctx).Info("Released the hold on cluster RBAC", "changed", n)
	}
	return holdError(err)
}

// countHeld counts the objects, but self's, that still carry one of csv-cleaner's finalizers.
func (r *Reconciler) countHeld(ctx context.Context, self types.NamespacedName) (int, error) {
	csvs := csvMetadataList()
	if err := r.APIReader.List(ctx, csvs); err != nil {
		return 0, fmt.Errorf("listing CSVs: %w", err)
	}
	n := 0
	for i := range csvs.Items {
		if !r.isSelf(&csvs.Items[i]) && r.Finalizers.HeldBy(csvs.Items[i].Finalizers) {
			n++
		}
	}
	rbacHeld, err := r.holder(r.APIReader).Count(ctx, rbac.AnyCSVOwner(), self)
	n += rbacHeld
	if err != nil {
		return n, err
	}
	return n, nil
}

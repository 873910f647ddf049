package extensioncontroller

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide/olmv1"
	"github.com/csv-cleaner/csv-cleaner/pkg/finalizer"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
	"github.com/csv-cleaner/csv-cleaner/pkg/owninstall"
)

// Reconciler puts csv-cleaner's finalizer on the ClusterExtensions a
// policy selects and runs their uninstall when they are deleted.
type Reconciler struct {
	// Engine runs the uninstalls, as it does the CSVs'; its clients are the controller's.
	*cleanup.Engine
	// Life is csv-cleaner's own install: the extension that installed it is
	// handled apart, and its uninstall releases every extension.
	Life *owninstall.Life

	// written remembers what this process patched from the cache's copies.
	written *finalizer.Written
}

// +kubebuilder:rbac:groups=olm.operatorframework.io,resources=clusterextensions,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=cleanup.csv-cleaner.io,resources=extensioncleanups,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=cleanup.csv-cleaner.io,resources=extensioncleanups/status,verbs=get;update;patch

// Reconcile is the skeleton both controllers share (cleanup.ReconcileOwner)
// on a ClusterExtension: the extension that installed csv-cleaner is held
// whatever the policies say, and a live one gets the finalizer or loses it
// as its policy says.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.ReconcileOwner(ctx, extensions{r}, req)
}

// extensions is ClusterExtensions as the skeleton asks of them.
type extensions struct{ r *Reconciler }

func (extensions) Record() cleanup.RecordKind                       { return cleanup.Extensions }
func (extensions) LogKey() string                                   { return "clusterExtension" }
func (extensions) Gone(context.Context, types.NamespacedName) error { return nil }

func (x extensions) Fate(ctx context.Context) (decide.SelfFate, string, error) {
	return x.r.Life.Fate(ctx)
}

func (x extensions) Own(ctx context.Context, ext *metav1.PartialObjectMetadata) (bool, error) {
	return x.r.Life.IsOwnExtension(ctx, ext)
}

func (x extensions) Self(ctx context.Context, ext *metav1.PartialObjectMetadata, fate decide.SelfFate, why string) (ctrl.Result, error) {
	return x.r.reconcileSelf(ctx, ext, fate, why)
}

func (x extensions) Policy(ctx context.Context, ext *metav1.PartialObjectMetadata) (*cleanupv1alpha1.CleanupPolicy, error) {
	return policyOf(ctx, x.r.Client, ext)
}

func (x extensions) Delete(ctx context.Context, ext *metav1.PartialObjectMetadata, policy *cleanupv1alpha1.CleanupPolicy) (ctrl.Result, error) {
	return x.r.reconcileDelete(ctx, ext, policy)
}

// Manage: operator-controller writes its finalizers with a merge patch from
// its cache, which replaces the list: a finalizer added at the same moment
// can be dropped. The extension's update brings it back here.
func (x extensions) Manage(ctx context.Context, ext *metav1.PartialObjectMetadata, policy *cleanupv1alpha1.CleanupPolicy) error {
	if policy == nil {
		return cleanup.InStep("release", x.Release(ctx, ext))
	}
	return x.r.patchFinalizers(ctx, ext, x.r.Finalizers.Ensure)
}

// Release: csv-cleaner is being uninstalled, or no policy selects the
// extension: it lets go of it.
func (x extensions) Release(ctx context.Context, ext *metav1.PartialObjectMetadata) error {
	return x.r.patchFinalizers(ctx, ext, x.r.Finalizers.Remove)
}

// reconcileSelf keeps csv-cleaner's finalizer on the ClusterExtension that
// installed it, whatever the policies say: the garbage collector then
// leaves csv-cleaner's Deployment and RBAC in force while the extension is
// deleting, and csv-cleaner removes every finalizer it placed before it
// releases its own extension, last.
func (r *Reconciler) reconcileSelf(ctx context.Context, ext *metav1.PartialObjectMetadata, fate decide.SelfFate, why string) (ctrl.Result, error) {
	if fate != decide.SelfUninstalled {
		return ctrl.Result{}, r.patchFinalizers(ctx, ext, r.Finalizers.Ensure)
	}
	if !r.Finalizers.HeldBy(ext.Finalizers) {
		return ctrl.Result{}, nil
	}
	settled, err := r.Life.ReleaseOthers(ctx, why)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !settled {
		// A reconcile that started before the deletion may still add one:
		// its own extension goes only after a pass that finds nothing left.
		return ctrl.Result{RequeueAfter: owninstall.ReleaseAgainAfter}, nil
	}
	r.Event(ext, corev1.EventTypeNormal, "FinalizersReleased", "Uninstall",
		"csv-cleaner removed every finalizer it placed on CSVs, ClusterExtensions and cluster RBAC; releasing its own ClusterExtension")
	logr.FromContextOrDiscard(ctx).Info("Releasing csv-cleaner's own ClusterExtension, last")
	return ctrl.Result{}, r.patchFinalizers(ctx, ext, r.Finalizers.Remove)
}

// policyOf is the CleanupPolicy that manages the extension, nil when none does.
func policyOf(ctx context.Context, reader client.Reader, ext metav1.Object) (*cleanupv1alpha1.CleanupPolicy, error) {
	policies := &cleanupv1alpha1.CleanupPolicyList{}
	if err := reader.List(ctx, policies); err != nil {
		return nil, fmt.Errorf("listing CleanupPolicies: %w", err)
	}
	sel, errs := olmv1.SelectExtensionPolicy(policies.Items, ext.GetLabels())
	for _, err := range errs {
		logr.FromContextOrDiscard(ctx).Error(err, "Ignoring a CleanupPolicy whose selector cannot be read")
	}
	return sel.Winner, nil
}

// patchFinalizers applies edit to the extension's finalizers (finalizer.Edit).
func (r *Reconciler) patchFinalizers(ctx context.Context, ext client.Object, edit func([]string) ([]string, bool)) error {
	return finalizer.Edit(ctx, r.APIReader, r.Client, r.written, objects.ExtensionKind, ext, edit)
}

package extensioncontroller

import (
	"context"
	"slices"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/finalizer"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
	"github.com/csv-cleaner/csv-cleaner/pkg/owninstall"
)

// Served reports whether the API server serves ClusterExtensions (OLM v1
// is installed): the controller is set up only then.
func Served(mgr ctrl.Manager) (bool, error) {
	return objects.Served(mgr.GetRESTMapper(), ocv1.GroupVersion.WithKind(ocv1.ClusterExtensionKind))
}

// SetupIfServed registers the ClusterExtension controller when the API
// server serves ClusterExtensions, and reports whether it did. OLM v1
// installed later is seen at csv-cleaner's next start.
func SetupIfServed(mgr ctrl.Manager, e *cleanup.Engine, life *owninstall.Life, workers int) (bool, error) {
	ok, err := Served(mgr)
	if err != nil || !ok {
		return false, err
	}
	return true, Setup(mgr, e, life, workers)
}

// Setup registers the ClusterExtension controller on the engine the CSVs'
// controller runs on too (its clients, finalizer, records, Events and
// metrics); life looks for the extension that installed csv-cleaner.
func Setup(mgr ctrl.Manager, e *cleanup.Engine, life *owninstall.Life, workers int) error {
	life.WatchOwnExtension(mgr.GetAPIReader())
	r := &Reconciler{Engine: e, Life: life, written: &finalizer.Written{}}
	return ctrl.NewControllerManagedBy(mgr).
		Named("clusterextension").
		For(objects.ExtensionMetadata(), builder.WithPredicates(e.ObserveDeletions(), changed)).
		Watches(&cleanupv1alpha1.CleanupPolicy{}, handler.EnqueueRequestsFromMapFunc(r.allExtensions),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, cleanup.DeletionChanged))).
		// A record left Releasing (the release's reply was lost, or csv-cleaner
		// stopped right after it) is completed once its extension is gone,
		// after a restart too.
		Watches(&cleanupv1alpha1.ExtensionCleanup{}, handler.EnqueueRequestsFromMapFunc(recordsExtension),
			builder.WithPredicates(cleanup.Releasing)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, workers), RateLimiter: cleanup.RateLimiter()}).
		Complete(r)
}

// changed lets through only the updates that can change what csv-cleaner
// does: labels, finalizers (operator-controller's patches may drop
// csv-cleaner's), deletion, spec (the generation); not the status.
var changed = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		return o.GetGeneration() != n.GetGeneration() ||
			!equality.Semantic.DeepEqual(o.GetLabels(), n.GetLabels()) ||
			!slices.Equal(o.GetFinalizers(), n.GetFinalizers()) ||
			!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp())
	},
}

// allExtensions enqueues every cached ClusterExtension: a policy change can change any of them.
func (r *Reconciler) allExtensions(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(ocv1.GroupVersion.WithKind(ocv1.ClusterExtensionKind + "List"))
	if err := r.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ClusterExtensions to re-examine")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}

// recordsExtension maps a record to its ClusterExtension.
func recordsExtension(_ context.Context, obj client.Object) []reconcile.Request {
	if rec, ok := obj.(*cleanupv1alpha1.ExtensionCleanup); ok && rec.Spec.ClusterExtensionName != "" {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: rec.Spec.ClusterExtensionName}}}
	}
	return nil
}

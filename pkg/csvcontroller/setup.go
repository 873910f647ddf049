package csvcontroller

import (
	"context"
	"slices"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// CacheOptions caches what the cached decisions read and no more: the
// metadata of CSVs that are not copies, trimmed (TrimCSV). A read of a kind
// no controller watches fails rather than start an informer
// (docs/architecture.md says why).
func CacheOptions() cache.Options {
	byObject := map[client.Object]cache.ByObject{
		objects.CSVMetadata(): {
			Label:     notCopiedSelector(),
			Transform: TrimCSV,
		},
	}
	// Only the metadata of the cluster RBAC that OLM gives CSVs is watched.
	for _, gvk := range rbac.HeldKinds {
		byObject[objects.Metadata(gvk)] = cache.ByObject{Label: rbac.AnyCSVOwner(), Transform: cache.TransformStripManagedFields()}
	}
	return cache.Options{ByObject: byObject, ReaderFailOnMissingInformer: true}
}

// notCopiedSelector selects the CSVs that are not OLM's copies.
func notCopiedSelector() labels.Selector {
	notCopied, err := labels.NewRequirement(operatorsv1alpha1.CopiedLabelKey, selection.DoesNotExist, nil)
	if err != nil {
		panic(err) // a constant requirement
	}
	return labels.NewSelector().Add(*notCopied)
}

// notCopied is notCopiedSelector as a list option.
func notCopied() client.MatchingLabelsSelector {
	return client.MatchingLabelsSelector{Selector: notCopiedSelector()}
}

// TrimCSV drops from a cached CSV's metadata its managedFields and every
// annotation but olm.operatorNamespace where it tells a copy: decisions read
// annotations from the live CSV.
func TrimCSV(obj any) (any, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj, nil // not an object (a tombstone): kept as it is
	}
	m.SetManagedFields(nil)
	if a := m.GetAnnotations(); a != nil {
		var kept map[string]string
		if ns, ok := a[operatorsv1alpha1.OperatorGroupNamespaceAnnotationKey]; ok && ns != m.GetNamespace() {
			kept = map[string]string{operatorsv1alpha1.OperatorGroupNamespaceAnnotationKey: ns}
		}
		m.SetAnnotations(kept)
	}
	return obj, nil
}

// csvChanged lets through only the CSV updates that can change what
// csv-cleaner does: labels, annotations, finalizers, deletion, spec (the
// generation). OLM's
// frequent status updates are ignored.
var csvChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		return o.GetGeneration() != n.GetGeneration() ||
			!equality.Semantic.DeepEqual(o.GetLabels(), n.GetLabels()) ||
			!equality.Semantic.DeepEqual(o.GetAnnotations(), n.GetAnnotations()) ||
			!slices.Equal(o.GetFinalizers(), n.GetFinalizers()) ||
			!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp())
	},
}

// SetupWithManager registers the CSV controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("clusterserviceversion").
		// The deletion's revision is observed first, on every update.
		For(objects.CSVMetadata(), builder.WithPredicates(r.ObserveDeletions(), csvChanged)).
		Watches(&cleanupv1alpha1.CleanupPolicy{}, handler.EnqueueRequestsFromMapFunc(r.allCSVs),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, cleanup.DeletionChanged))).
		// A namespace's labels select policies; a terminating namespace stops
		// reinstalls, and csv-cleaner's own one means its uninstall.
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.csvsInNamespace),
			builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, cleanup.DeletionChanged))).
		// An upgrade can add ClusterRoles to hold; a hold left on RBAC whose CSV is gone is released.
		WatchesMetadata(objects.Metadata(rbac.ClusterRole), handler.EnqueueRequestsFromMapFunc(ownerCSV)).
		WatchesMetadata(objects.Metadata(rbac.ClusterRoleBinding), handler.EnqueueRequestsFromMapFunc(ownerCSV)).
		// A record left Releasing (the release's reply was lost, or csv-cleaner
		// stopped right after it) is completed, after a restart too, whether
		// its CSV is gone or still held by others' finalizers.
		Watches(&cleanupv1alpha1.CSVCleanup{}, handler.EnqueueRequestsFromMapFunc(recordsCSV),
			builder.WithPredicates(cleanup.Releasing)).
		WithOptions(opts).
		Complete(r)
}

// recordsCSV maps a record to its CSV.
func recordsCSV(_ context.Context, obj client.Object) []reconcile.Request {
	if rec, ok := obj.(*cleanupv1alpha1.CSVCleanup); ok && rec.Spec.CSVName != "" {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: rec.Spec.CSVNamespace, Name: rec.Spec.CSVName}}}
	}
	return nil
}

// ownerCSV maps a ClusterRole or binding to the CSV its owner labels name.
func ownerCSV(_ context.Context, obj client.Object) []reconcile.Request {
	if csv, ok := rbac.OwnerOf(obj.GetLabels()); ok {
		return []reconcile.Request{{NamespacedName: csv}}
	}
	return nil
}

// allCSVs enqueues every cached CSV: a policy change can change any of them.
func (r *Reconciler) allCSVs(ctx context.Context, _ client.Object) []reconcile.Request {
	return listRequests(ctx, r.Client)
}

func (r *Reconciler) csvsInNamespace(ctx context.Context, ns client.Object) []reconcile.Request {
	return listRequests(ctx, r.Client, client.InNamespace(ns.GetName()))
}

func listRequests(ctx context.Context, c client.Reader, opts ...client.ListOption) []reconcile.Request {
	list := objects.CSVMetadataList()
	// Only the keys are read: the cache's objects are not copied.
	if err := c.List(ctx, list, append(opts, client.UnsafeDisableDeepCopy)...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing CSVs to re-examine")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}

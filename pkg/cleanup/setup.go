package cleanup

import (
	"context"
	"slices"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// CacheOptions keeps the CSV cache small: copied CSVs (label olm.copiedFrom,
// usually most CSVs of a cluster) are left out by a label selector, and the
// fields csv-cleaner never reads from the cache are dropped.
func CacheOptions() cache.Options {
	notCopied, err := labels.NewRequirement(operatorsv1alpha1.CopiedLabelKey, selection.DoesNotExist, nil)
	if err != nil {
		panic(err) // a constant requirement
	}
	byObject := map[client.Object]cache.ByObject{
		&operatorsv1alpha1.ClusterServiceVersion{}: {
			Label:     labels.NewSelector().Add(*notCopied),
			Transform: TrimCSV,
		},
	}
	// Only the metadata of the cluster RBAC that OLM gives CSVs is watched.
	for _, gvk := range rbac.HeldKinds {
		byObject[heldMetadata(gvk)] = cache.ByObject{Label: rbac.AnyCSVOwner()}
	}
	return cache.Options{ByObject: byObject}
}

// TrimCSV drops what csv-cleaner never reads from a cached CSV: the install
// strategy, icons, descriptions, descriptors, webhook and API service
// definitions, status conditions and managedFields. Decisions that delete
// something read the CSV live.
func TrimCSV(obj any) (any, error) {
	csv, ok := obj.(*operatorsv1alpha1.ClusterServiceVersion)
	if !ok {
		return obj, nil
	}
	csv.ManagedFields = nil
	delete(csv.Annotations, "alm-examples")
	delete(csv.Annotations, "description")
	delete(csv.Annotations, "kubectl.kubernetes.io/last-applied-configuration")
	csv.Spec.Description = ""
	csv.Spec.Icon = nil
	csv.Spec.InstallStrategy = operatorsv1alpha1.NamedInstallStrategy{}
	csv.Spec.WebhookDefinitions = nil
	csv.Spec.APIServiceDefinitions = operatorsv1alpha1.APIServiceDefinitions{}
	csv.Spec.RelatedImages = nil
	csv.Spec.Links, csv.Spec.Maintainers, csv.Spec.Keywords = nil, nil, nil
	owned := make([]operatorsv1alpha1.CRDDescription, len(csv.Spec.CustomResourceDefinitions.Owned))
	for i, o := range csv.Spec.CustomResourceDefinitions.Owned {
		owned[i] = operatorsv1alpha1.CRDDescription{Name: o.Name, Version: o.Version, Kind: o.Kind}
	}
	csv.Spec.CustomResourceDefinitions = operatorsv1alpha1.CustomResourceDefinitions{Owned: owned}
	csv.Status.Conditions = nil
	csv.Status.RequirementStatus = nil
	csv.Status.Message = ""
	return csv, nil
}

// csvChanged lets through only the CSV updates that can change what
// csv-cleaner does: labels, annotations, finalizers, deletion, spec. OLM's
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
		For(&operatorsv1alpha1.ClusterServiceVersion{}, builder.WithPredicates(csvChanged)).
		Watches(&cleanupv1alpha1.CleanupPolicy{}, handler.EnqueueRequestsFromMapFunc(r.allCSVs),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, deletionChanged))).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.csvsInNamespace),
			builder.WithPredicates(predicate.LabelChangedPredicate{})).
		// An upgrade can add ClusterRoles to hold; a hold left on RBAC whose CSV is gone is released.
		WatchesMetadata(heldMetadata(rbac.ClusterRole), handler.EnqueueRequestsFromMapFunc(ownerCSV)).
		WatchesMetadata(heldMetadata(rbac.ClusterRoleBinding), handler.EnqueueRequestsFromMapFunc(ownerCSV)).
		WithOptions(opts).
		Complete(r)
}

// heldMetadata is the metadata-only object of a kind csv-cleaner holds.
func heldMetadata(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

// ownerCSV maps a ClusterRole or binding to the CSV its owner labels name.
func ownerCSV(_ context.Context, obj client.Object) []reconcile.Request {
	if csv, ok := rbac.OwnerOf(obj.GetLabels()); ok {
		return []reconcile.Request{{NamespacedName: csv}}
	}
	return nil
}

var deletionChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !e.ObjectOld.GetDeletionTimestamp().Equal(e.ObjectNew.GetDeletionTimestamp())
	},
}

// allCSVs enqueues every cached CSV: a policy change can change any of them.
func (r *Reconciler) allCSVs(ctx context.Context, _ client.Object) []reconcile.Request {
	return listRequests(ctx, r.Client)
}

func (r *Reconciler) csvsInNamespace(ctx context.Context, ns client.Object) []reconcile.Request {
	return listRequests(ctx, r.Client, client.InNamespace(ns.GetName()))
}

func listRequests(ctx context.Context, c client.Reader, opts ...client.ListOption) []reconcile.Request {
	list := &operatorsv1alpha1.ClusterServiceVersionList{}
	if err := c.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing CSVs to re-examine")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}

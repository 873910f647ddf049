package csvcontroller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
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
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// PolicyStatusReconciler keeps each CleanupPolicy's status true: how many
// CSVs it manages now and whether it overlaps another policy.
type PolicyStatusReconciler struct {
	Client client.Client
}

// +kubebuilder:rbac:groups=cleanup.csv-cleaner.io,resources=cleanuppolicies/status,verbs=get;update;patch

// Reconcile recounts one policy from the cache and writes its status only when it changed.
func (r *PolicyStatusReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	policy := &cleanupv1alpha1.CleanupPolicy{}
	if err := r.Client.Get(ctx, req.NamespacedName, policy); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	policies := &cleanupv1alpha1.CleanupPolicyList{}
	if err := r.Client.List(ctx, policies); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing CleanupPolicies: %w", err)
	}
	// The CSVs and namespaces are only read: no copy of the cache is made
	// for each recount, which runs on every CSV created or deleted.
	csvs := objects.CSVMetadataList()
	if err := r.Client.List(ctx, csvs, client.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing CSVs: %w", err)
	}
	namespaces := &corev1.NamespaceList{}
	if err := r.Client.List(ctx, namespaces, client.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing namespaces: %w", err)
	}
	nsLabels := make(map[string]map[string]string, len(namespaces.Items))
	for _, ns := range namespaces.Items {
		nsLabels[ns.Name] = ns.Labels
	}

	// A selector that cannot be parsed fails whatever the labels are.
	_, selErr := decide.Selects(policy, nil, nil)
	managed, overlaps := 0, map[string]bool{}
	for i := range csvs.Items {
		csv := &csvs.Items[i]
		sel, _ := decide.SelectPolicy(policies.Items, csv.Labels, nsLabels[csv.Namespace])
		if !decide.Managed(sel.Winner, csv) {
			continue
		}
		names := append([]string{sel.Winner.Name}, sel.Others...)
		if !slices.Contains(names, policy.Name) {
			continue
		}
		if sel.Winner.Name == policy.Name {
			managed++
		}
		for _, n := range names {
			if n != policy.Name {
				overlaps[n] = true
			}
		}
	}

	base := policy.DeepCopy()
	policy.Status.ManagedCSVs = int32(managed)
	cond := metav1.Condition{Type: cleanupv1alpha1.ConditionOverlapping, Status: metav1.ConditionFalse, Reason: "NoOverlap",
		Message: "No other policy selects the CSVs this policy selects", ObservedGeneration: policy.Generation}
	switch {
	case selErr != nil:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionUnknown, "InvalidSelector", selErr.Error()
	case len(overlaps) > 0:
		others := make([]string, 0, len(overlaps))
		for n := range overlaps {
			others = append(others, n)
		}
		slices.Sort(others)
		cond.Status, cond.Reason = metav1.ConditionTrue, "Overlap"
		cond.Message = fmt.Sprintf("Policies %s select some of the same CSVs; the highest priority, then the first name, wins", strings.Join(others, ", "))
	}
	meta.SetStatusCondition(&policy.Status.Conditions, cond)
	if equality.Semantic.DeepEqual(base.Status, policy.Status) {
		return reconcile.Result{}, nil
	}
	if err := r.Client.Status().Patch(ctx, policy, client.MergeFrom(base)); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return reconcile.Result{}, nil
}

// SetupWithManager registers the policy status controller. Any CSV created
// or deleted, a CSV's labels or a namespace's labels changing, and any
// policy change make every policy recount.
func (r *PolicyStatusReconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(r.allPolicies)
	return ctrl.NewControllerManagedBy(mgr).
		Named("cleanuppolicy").
		For(&cleanupv1alpha1.CleanupPolicy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&cleanupv1alpha1.CleanupPolicy{}, all, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(objects.CSVMetadata(), all, builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, membershipChanged))).
		Watches(&corev1.Namespace{}, all, builder.WithPredicates(predicate.LabelChangedPredicate{})).
		WithOptions(controller.Options{RateLimiter: cleanup.RateLimiter()}).
		Complete(r)
}

// membershipChanged: only creates and deletes change how many CSVs there are.
var membershipChanged = predicate.Funcs{
	UpdateFunc: func(event.UpdateEvent) bool { return false },
}

func (r *PolicyStatusReconciler) allPolicies(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &cleanupv1alpha1.CleanupPolicyList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing CleanupPolicies to recount")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, p := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: p.Name}})
	}
	return reqs
}

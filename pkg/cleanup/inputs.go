package cleanup

import (
	"context"
	"fmt"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get

// classifyInput reads, live, what Classify needs.
func (r *Reconciler) classifyInput(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion) (ClassifyInput, error) {
	in := ClassifyInput{CSV: csv}
	siblings := &operatorsv1alpha1.ClusterServiceVersionList{}
	if err := r.APIReader.List(ctx, siblings, client.InNamespace(csv.Namespace)); err != nil {
		return in, fmt.Errorf("listing CSVs in %s: %w", csv.Namespace, err)
	}
	in.Siblings = siblings.Items
	subs := &operatorsv1alpha1.SubscriptionList{}
	if err := r.APIReader.List(ctx, subs, client.InNamespace(csv.Namespace)); err != nil && !apierrors.IsNotFound(err) {
		return in, fmt.Errorf("listing Subscriptions in %s: %w", csv.Namespace, err)
	}
	in.Subscriptions = subs.Items
	terminating, err := r.namespaceTerminating(ctx, csv.Namespace)
	if err != nil {
		return in, err
	}
	in.NamespaceTerminating = terminating
	return in, nil
}

func (r *Reconciler) namespaceTerminating(ctx context.Context, name string) (bool, error) {
	ns := &corev1.Namespace{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("getting namespace %s: %w", name, err)
	}
	return !ns.DeletionTimestamp.IsZero() || ns.Status.Phase == corev1.NamespaceTerminating, nil
}

// targetNamespaces returns the namespaces the CSV operates on, as
// DecideTargets reads its OperatorGroup's status.namespaces and its
// olm.targetNamespaces annotation; a Problem when they cannot be known.
func (r *Reconciler) targetNamespaces(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion) (NamespaceSet, *Problem, error) {
	in := TargetsInput{CSV: csvKey(csv), OperatorGroup: csv.Annotations[operatorsv1.OperatorGroupAnnotationKey]}
	in.Annotation, in.HasAnnotation = csv.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey]
	if in.OperatorGroup != "" {
		og := &operatorsv1.OperatorGroup{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: csv.Namespace, Name: in.OperatorGroup}, og)
		switch {
		case err == nil:
			in.Status = og.Status.Namespaces
		case !apierrors.IsNotFound(err):
			return nil, nil, fmt.Errorf("getting OperatorGroup %s/%s: %w", csv.Namespace, in.OperatorGroup, err)
		}
	}
	targets, problem := DecideTargets(in)
	return targets, problem, nil
}

// operatorGroups reads, live, the OperatorGroups in the CSV's namespace,
// each with what OLM writes into its status.namespaces from its spec.
func (r *Reconciler) operatorGroups(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion) ([]OperatorGroupView, error) {
	list := &operatorsv1.OperatorGroupList{}
	if err := r.APIReader.List(ctx, list, client.InNamespace(csv.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the OperatorGroups of namespace %s: %w", csv.Namespace, err)
	}
	views := make([]OperatorGroupView, 0, len(list.Items))
	for _, og := range list.Items {
		v := OperatorGroupView{Name: og.Name, Status: og.Status.Namespaces, Expected: og.Spec.TargetNamespaces}
		if len(v.Expected) == 0 {
			// As OLM reads it: no selector, or an empty one, is every namespace.
			sel, err := metav1.LabelSelectorAsSelector(og.Spec.Selector)
			if err != nil {
				return nil, fmt.Errorf("reading the selector of OperatorGroup %s/%s: %w", og.Namespace, og.Name, err)
			}
			if og.Spec.Selector == nil || sel.Empty() {
				v.Expected = []string{""}
			} else {
				namespaces := &corev1.NamespaceList{}
				if err := r.APIReader.List(ctx, namespaces, client.MatchingLabelsSelector{Selector: sel}); err != nil {
					return nil, fmt.Errorf("listing the namespaces OperatorGroup %s/%s selects: %w", og.Namespace, og.Name, err)
				}
				v.Expected = []string{}
				for _, ns := range namespaces.Items {
					v.Expected = append(v.Expected, ns.Name)
				}
			}
		}
		views = append(views, v)
	}
	return views, nil
}

// operatorGroupProblem blocks an uninstall whose OperatorGroups leave its
// target namespaces in doubt (DecideOperatorGroups).
func (r *Reconciler) operatorGroupProblem(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion) (*Problem, error) {
	groups, err := r.operatorGroups(ctx, csv)
	if err != nil {
		return nil, err
	}
	return DecideOperatorGroups(csvKey(csv), groups), nil
}

// ownedCRDs reads, live, the CSV's owned CRDs that exist.
func (r *Reconciler) ownedCRDs(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion) (map[string]*apiextensionsv1.CustomResourceDefinition, error) {
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, owned := range csv.Spec.CustomResourceDefinitions.Owned {
		if _, done := out[owned.Name]; done || validOwnedName(owned.Name) != "" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Name: owned.Name}, crd)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("getting CRD %s: %w", owned.Name, err)
		default:
			out[owned.Name] = crd
		}
	}
	return out, nil
}

// otherOwners finds, among the other live, non-copied CSVs, those that own
// any of the CSV's owned CRDs, with their target namespaces (all namespaces
// when they cannot be known: the safe side). They are read live, a page at a
// time, because the cache holds only CSVs' metadata and because an install
// created a moment ago must count.
func (r *Reconciler) otherOwners(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion) (map[string][]OtherOwner, error) {
	wanted := map[string]bool{}
	for _, o := range csv.Spec.CustomResourceDefinitions.Owned {
		wanted[o.Name] = true
	}
	out := map[string][]OtherOwner{}
	newList := func() *operatorsv1alpha1.ClusterServiceVersionList {
		return &operatorsv1alpha1.ClusterServiceVersionList{}
	}
	err := listPages(ctx, r.APIReader, newList, otherOwnersPage, func(page *operatorsv1alpha1.ClusterServiceVersionList) error {
		for i := range page.Items {
			other := &page.Items[i]
			if other.UID == csv.UID || !other.DeletionTimestamp.IsZero() || other.IsCopied() {
				continue
			}
			targets, err := ParseTargets(other.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey])
			if _, ok := other.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey]; !ok || err != nil {
				targets = AllNamespaces() // unknown: the other CSV keeps every namespace, the safe side
			}
			for _, o := range other.Spec.CustomResourceDefinitions.Owned {
				if wanted[o.Name] {
					out[o.Name] = append(out[o.Name], OtherOwner{CSV: csvKey(other), Targets: targets})
				}
			}
		}
		return nil
	}, notCopied())
	if err != nil {
		return nil, fmt.Errorf("listing CSVs: %w", err)
	}
	return out, nil
}

// otherOwnersPage is how many whole CSVs otherOwners reads at a time: a real
// CSV, with its icon and install strategy, can be a few hundred kilobytes.
const otherOwnersPage = 50

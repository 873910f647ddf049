package csvcontroller

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/instances"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// gatherer is the engine's Gatherer with the reads of a CSV's decisions:
// the uninstall, its acknowledgement and `csv-cleaner plan` read their
// inputs through it, and it can only read.
type gatherer struct{ instances.Gatherer }

// gather is the Reconciler's gatherer.
func (r *Reconciler) gather() gatherer {
	return gatherer{instances.Gatherer{Live: r.APIReader, Cached: r.Client}}
}

// Policy returns the policy that selects the CSV (decide.SelectPolicy), or nil.
func (g gatherer) Policy(ctx context.Context, csv metav1.Object) (*cleanupv1alpha1.CleanupPolicy, error) {
	policies := &cleanupv1alpha1.CleanupPolicyList{}
	if err := g.Cached.List(ctx, policies); err != nil {
		return nil, fmt.Errorf("listing CleanupPolicies: %w", err)
	}
	if len(policies.Items) == 0 {
		return nil, nil
	}
	ns := &corev1.Namespace{}
	if err := g.Cached.Get(ctx, client.ObjectKey{Name: csv.GetNamespace()}, ns); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("getting namespace %s: %w", csv.GetNamespace(), err)
	}
	sel, errs := decide.SelectPolicy(policies.Items, csv.GetLabels(), ns.Labels)
	for _, err := range errs {
		logr.FromContextOrDiscard(ctx).Error(err, "Ignoring a CleanupPolicy whose selector cannot be parsed")
	}
	return sel.Winner, nil
}

// Classify reads, live, what decide.Classify needs.
func (g gatherer) Classify(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion) (decide.ClassifyInput, error) {
	in := decide.ClassifyInput{CSV: csv}
	// At once: kube-apiserver serves a consistent LIST from its watch cache
	// once the cache has caught up with etcd, which can take up to its
	// progress-notification period (100 ms) after writes to other kinds.
	// Reads one after another would add those waits up.
	siblings := &operatorsv1alpha1.ClusterServiceVersionList{}
	eg, gctx := errgroup.WithContext(ctx)
	eg.Go(func() error {
		if err := g.Live.List(gctx, siblings, client.InNamespace(csv.Namespace)); err != nil {
			return fmt.Errorf("listing CSVs in %s: %w", csv.Namespace, err)
		}
		return nil
	})
	eg.Go(func() (err error) {
		in.Subscriptions, err = g.subscriptions(gctx, csv.Namespace)
		return err
	})
	eg.Go(func() (err error) {
		in.NamespaceTerminating, err = g.namespaceTerminating(gctx, csv.Namespace)
		return err
	})
	err := eg.Wait()
	in.Siblings = siblings.Items
	return in, err
}

// classifyListed is Classify for a CSV known by its key, with its
// namespace read from the cache: the live list of the namespace's CSVs
// gives the CSV itself (in.CSV, nil when it is gone) and its siblings. For
// the acknowledgement of a deletion, which deletes nothing.
func (g gatherer) classifyListed(ctx context.Context, key client.Object) (decide.ClassifyInput, error) {
	var in decide.ClassifyInput
	siblings := &operatorsv1alpha1.ClusterServiceVersionList{}
	if err := g.Live.List(ctx, siblings, client.InNamespace(key.GetNamespace())); err != nil {
		return in, fmt.Errorf("listing CSVs in %s: %w", key.GetNamespace(), err)
	}
	for i := range siblings.Items {
		if siblings.Items[i].Name == key.GetName() {
			in.CSV = &siblings.Items[i]
		}
	}
	if in.CSV == nil {
		return in, nil
	}
	in.Siblings = siblings.Items
	subs, err := g.subscriptions(ctx, key.GetNamespace())
	if err != nil {
		return in, err
	}
	in.Subscriptions = subs
	ns := &corev1.Namespace{}
	err = g.Cached.Get(ctx, client.ObjectKey{Name: key.GetNamespace()}, ns)
	in.NamespaceTerminating = apierrors.IsNotFound(err) || !ns.DeletionTimestamp.IsZero() || ns.Status.Phase == corev1.NamespaceTerminating
	if client.IgnoreNotFound(err) != nil {
		return in, fmt.Errorf("getting namespace %s: %w", key.GetNamespace(), err)
	}
	return in, nil
}

// subscriptions lists, live, the Subscriptions of a namespace.
func (g gatherer) subscriptions(ctx context.Context, namespace string) ([]operatorsv1alpha1.Subscription, error) {
	subs := &operatorsv1alpha1.SubscriptionList{}
	if err := g.Live.List(ctx, subs, client.InNamespace(namespace)); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("listing Subscriptions in %s: %w", namespace, err)
	}
	return subs.Items, nil
}

func (g gatherer) namespaceTerminating(ctx context.Context, name string) (bool, error) {
	ns := &corev1.Namespace{}
	if err := g.Live.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("getting namespace %s: %w", name, err)
	}
	return !ns.DeletionTimestamp.IsZero() || ns.Status.Phase == corev1.NamespaceTerminating, nil
}

// Operands is what the operand decisions of an uninstall read, before any
// instance is listed.
type Operands struct {
	// Scopes are the owned CRDs as decide.ScopeCRDs decides them.
	Scopes []decide.CRDScope
	// Targets are the CSV's target namespaces; nil when they cannot be known.
	Targets decide.NamespaceSet
	// Gate is the rest of decide.GateOperands' input: the problems found.
	Gate decide.GateInput
}

// Operands reads, live, the CSV's OperatorGroups, owned CRDs, the other
// CSVs that own them and its target namespaces, and scopes the owned CRDs.
func (g gatherer) Operands(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion, v decide.Verdict, s decide.Settings) (Operands, error) {
	reads, err := g.readOperandInputs(ctx, csv)
	if err != nil {
		return Operands{}, err
	}
	return reads.operands(csv, v, s), nil
}

// operandReads is what Operands reads, before it decides.
type operandReads struct {
	groups         []decide.OperatorGroupView
	crds           map[string]*apiextensionsv1.CustomResourceDefinition
	others         map[string][]decide.OtherOwner
	targets        decide.NamespaceSet
	targetsProblem *decide.Problem
}

// readOperandInputs reads them at once, as Classify does: each consistent
// LIST may wait up to kube-apiserver's progress-notification period for its
// watch cache, and reads that run together wait together.
func (g gatherer) readOperandInputs(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion) (operandReads, error) {
	var rd operandReads
	eg, gctx := errgroup.WithContext(ctx)
	eg.Go(func() (err error) { rd.groups, err = g.operatorGroups(gctx, csv); return err })
	eg.Go(func() (err error) { rd.crds, err = g.ownedCRDs(gctx, csv); return err })
	eg.Go(func() (err error) { rd.others, err = g.otherOwners(gctx, csv); return err })
	eg.Go(func() (err error) { rd.targets, rd.targetsProblem, err = g.targetNamespaces(gctx, csv); return err })
	return rd, eg.Wait()
}

// operands decides what the reads come to for the verdict and settings.
func (rd operandReads) operands(csv *operatorsv1alpha1.ClusterServiceVersion, v decide.Verdict, s decide.Settings) Operands {
	out := Operands{Targets: rd.targets, Gate: decide.GateInput{Verdict: v, Settings: s, Targets: rd.targetsProblem}}
	out.Gate.OperatorGroups = decide.DecideOperatorGroups(objects.Key(csv), rd.groups)
	out.Scopes, out.Gate.Scope = decide.ScopeCRDs(decide.ScopeInput{
		CSV: objects.Key(csv), Owned: csv.Spec.CustomResourceDefinitions.Owned, CRDs: rd.crds,
		CRDProvenance: s.CRDProvenance, OtherOwners: rd.others,
	})
	return out
}

// targetNamespaces returns the namespaces the CSV operates on, as
// decide.DecideTargets reads its OperatorGroup's status.namespaces and its
// olm.targetNamespaces annotation; a Problem when they cannot be known.
func (g gatherer) targetNamespaces(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion) (decide.NamespaceSet, *decide.Problem, error) {
	in := decide.TargetsInput{CSV: objects.Key(csv), OperatorGroup: csv.Annotations[operatorsv1.OperatorGroupAnnotationKey]}
	in.Annotation, in.HasAnnotation = csv.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey]
	if in.OperatorGroup != "" {
		og := &operatorsv1.OperatorGroup{}
		err := g.Live.Get(ctx, client.ObjectKey{Namespace: csv.Namespace, Name: in.OperatorGroup}, og)
		switch {
		case err == nil:
			in.Status = og.Status.Namespaces
		case !apierrors.IsNotFound(err):
			return nil, nil, fmt.Errorf("getting OperatorGroup %s/%s: %w", csv.Namespace, in.OperatorGroup, err)
		}
	}
	targets, problem := decide.DecideTargets(in)
	return targets, problem, nil
}

// operatorGroups reads, live, the OperatorGroups in the CSV's namespace,
// each with what OLM writes into its status.namespaces from its spec.
func (g gatherer) operatorGroups(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion) ([]decide.OperatorGroupView, error) {
	list := &operatorsv1.OperatorGroupList{}
	if err := g.Live.List(ctx, list, client.InNamespace(csv.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the OperatorGroups of namespace %s: %w", csv.Namespace, err)
	}
	views := make([]decide.OperatorGroupView, 0, len(list.Items))
	for _, og := range list.Items {
		v := decide.OperatorGroupView{Name: og.Name, Status: og.Status.Namespaces, Expected: og.Spec.TargetNamespaces}
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
				if err := g.Live.List(ctx, namespaces, client.MatchingLabelsSelector{Selector: sel}); err != nil {
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

// crdReads bounds the owned CRDs read at once.
const crdReads = 8

// ownedCRDs reads, live, the CSV's owned CRDs that exist (a malformed name
// is decide.ScopeCRDs' to report).
func (g gatherer) ownedCRDs(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion) (map[string]*apiextensionsv1.CustomResourceDefinition, error) {
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	seen := map[string]bool{}
	var mu sync.Mutex
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(crdReads)
	for _, owned := range csv.Spec.CustomResourceDefinitions.Owned {
		if seen[owned.Name] || decide.ValidOwnedName(owned.Name) != "" {
			continue
		}
		seen[owned.Name] = true
		eg.Go(func() error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			err := g.Live.Get(gctx, client.ObjectKey{Name: owned.Name}, crd)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return fmt.Errorf("getting CRD %s: %w", owned.Name, err)
			default:
				out[owned.Name] = crd
			}
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// otherOwners finds, among the other live, non-copied CSVs, those that own
// any of the CSV's owned CRDs, with their target namespaces (all namespaces
// when they cannot be known: the safe side). They are read live, a page at a
// time, because the cache holds only CSVs' metadata and because an install
// created a moment ago must count.
func (g gatherer) otherOwners(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion) (map[string][]decide.OtherOwner, error) {
	wanted := map[string]bool{}
	for _, o := range csv.Spec.CustomResourceDefinitions.Owned {
		wanted[o.Name] = true
	}
	out := map[string][]decide.OtherOwner{}
	newList := func() *operatorsv1alpha1.ClusterServiceVersionList {
		return &operatorsv1alpha1.ClusterServiceVersionList{}
	}
	err := objects.ListPages(ctx, g.Live, newList, func(page *operatorsv1alpha1.ClusterServiceVersionList) error {
		for i := range page.Items {
			other := &page.Items[i]
			if other.UID == csv.UID || !other.DeletionTimestamp.IsZero() || other.IsCopied() {
				continue
			}
			targets, err := decide.ParseTargets(other.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey])
			if _, ok := other.Annotations[operatorsv1.OperatorGroupTargetsAnnotationKey]; !ok || err != nil {
				targets = decide.AllNamespaces() // unknown: the other CSV keeps every namespace, the safe side
			}
			for _, o := range other.Spec.CustomResourceDefinitions.Owned {
				if wanted[o.Name] {
					out[o.Name] = append(out[o.Name], decide.OtherOwner{CSV: objects.Key(other), Targets: targets})
				}
			}
		}
		return nil
	}, notCopied(), client.Limit(otherOwnersPage))
	if err != nil {
		return nil, fmt.Errorf("listing CSVs: %w", err)
	}
	return out, nil
}

// otherOwnersPage is how many whole CSVs otherOwners reads at a time: a real
// CSV, with its icon and install strategy, can be a few hundred kilobytes.
const otherOwnersPage = 50

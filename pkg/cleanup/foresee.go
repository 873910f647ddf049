package cleanup

import (
	"context"
	"errors"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
)

// DefaultServiceAccount is csv-cleaner's ServiceAccount as its manifests
// and bundle install it: whose rights a plan checks.
var DefaultServiceAccount = types.NamespacedName{Namespace: "csv-cleaner", Name: "csv-cleaner"}

// Foreseen is a refusal the run would meet on one owned kind, with the
// reason and message its record would give.
type Foreseen struct {
	Kind string `json:"kind"`
	// Reason is Forbidden (csv-cleaner's ServiceAccount lacks a right) or
	// AdmissionRefused (a webhook or an admission policy refuses the delete).
	Reason  string `json:"reason"`
	Object  string `json:"object,omitempty"`
	Message string `json:"message"`
}

// foresight is what a plan keeps for Foresee: the kinds the run would
// check and delete, and what onTimeout asks of them.
type foresight struct {
	scopes    []plan.CRDScope
	onTimeout cleanupv1alpha1.TimeoutAction
	// converting are the CRDs (by name) whose conversion the run sets to None first.
	converting map[string]bool
}

// Foresee asks the API server, writing nothing, what the run would be
// refused on the kinds whose instances the plan deletes, and marks the
// plan: a right csv-cleaner's ServiceAccount sa lacks (a
// SubjectAccessReview for it, with the verbs the run checks of itself
// before it deletes anything), and a delete that a webhook or an admission
// policy refuses (a server-side dry-run DELETE of one planned object of
// each kind, sent as the caller). A refusal foreseen makes the verdict
// Blocked with the reason and message the run's record would give. What it
// could not ask (the caller may not) goes into the plan's notes.
func Foresee(ctx context.Context, c client.Client, d *DryRun, sa types.NamespacedName) error {
	if d.foresight == nil {
		return nil // nothing would be deleted: nothing to foresee
	}
	access, err := operandAccessOf(ctx, d.foresight.scopes, d.foresight.onTimeout, accessOf(c, sa))
	if err != nil {
		if !apierrors.IsForbidden(err) {
			return err
		}
		d.Notes = append(d.Notes, fmt.Sprintf("csv-cleaner's rights were not checked: %v", err))
	}
	for _, p := range access.denied {
		d.Refusals = append(d.Refusals, Foreseen{Kind: p.Object, Reason: p.Reason, Message: p.Message})
		d.problems = append(d.problems, p)
		d.accessDenied = true
	}
	for i := range d.foresight.scopes {
		s := &d.foresight.scopes[i]
		p, err := d.dryRunDelete(ctx, c, s)
		if err != nil {
			return err
		}
		if p != nil {
			d.Refusals = append(d.Refusals, Foreseen{Kind: s.Kind, Reason: p.Reason, Object: p.Object, Message: p.Message})
			d.problems = append(d.problems, *p)
		}
	}
	d.settle()
	return nil
}

// dryRunDelete sends a server-side dry-run DELETE of the first object of
// the scope's kind that the plan deletes, and returns what the run's record
// would say of its refusal; nil when it would be accepted, or could not be
// asked (a note says why).
func (d *DryRun) dryRunDelete(ctx context.Context, c client.Client, s *plan.CRDScope) (*plan.Problem, error) {
	if s.CRD == nil {
		return nil, nil
	}
	i := -1
	for j, it := range d.Items {
		if it.Kind == s.Kind && it.Action == plan.ActionDelete && it.Reason == plan.DeleteOwnedOperand {
			i = j
			break
		}
	}
	if i < 0 {
		return nil, nil
	}
	it := d.Items[i]
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(s.GVR.GroupVersion().WithKind(s.CRD.Spec.Names.Kind))
	obj.SetNamespace(it.Namespace)
	obj.SetName(it.Name)
	err := c.Delete(ctx, obj, client.DryRunAll)
	refusal, refused := ClassifyRefusal(err)
	switch {
	case err == nil || apierrors.IsNotFound(err):
		return nil, nil
	case refused && refusal.Reason == cleanupv1alpha1.BlockedConversionFailed && d.foresight.converting[s.Name]:
		// The run sets the conversion to None before it deletes anything of the kind.
		d.Notes = append(d.Notes, fmt.Sprintf("the delete of %s %s was not dry-run: it needs the conversion webhook, which the uninstall turns off first", s.Kind, path(it.Namespace, it.Name)))
		return nil, nil
	case refused && refusal.Reason == cleanupv1alpha1.BlockedForbidden:
		// RBAC refused the caller, not csv-cleaner: its rights are the review's.
		d.Notes = append(d.Notes, fmt.Sprintf("the delete of %s %s was not dry-run: %v", s.Kind, path(it.Namespace, it.Name), err))
		return nil, nil
	case refused:
		meta := metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: it.Namespace, Name: it.Name}}
		return refusalProblem([]refusedOperand{{kind: s.Kind, refusedObject: refusedObject{obj: meta, refusal: refusal}}}), nil
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return nil, err
	}
	d.Notes = append(d.Notes, fmt.Sprintf("the delete of %s %s could not be dry-run: %v", s.Kind, path(it.Namespace, it.Name), err))
	return nil, nil
}

// accessOf asks whether sa may do a verb on a scope's resource in every
// namespace (a SubjectAccessReview: as the run's SelfSubjectAccessReview,
// but for csv-cleaner's ServiceAccount rather than the caller).
func accessOf(c client.Client, sa types.NamespacedName) func(context.Context, plan.CRDScope, string) (bool, error) {
	user := serviceaccount.MakeUsername(sa.Namespace, sa.Name)
	groups := append(serviceaccount.MakeGroupNames(sa.Namespace), "system:authenticated")
	return func(ctx context.Context, s plan.CRDScope, verb string) (bool, error) {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: s.GVR.Group, Resource: s.GVR.Resource},
		}}
		if err := c.Create(ctx, review); err != nil {
			return false, fmt.Errorf("asking whether %s may %s %s: %w", strings.TrimPrefix(user, "system:serviceaccount:"), verb, s.GVR.GroupResource(), err)
		}
		return review.Status.Allowed, nil
	}
}

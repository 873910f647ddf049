package dryrun

import (
	"context"
	"errors"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/pkg/refusal"
)

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
	scopes    []decide.CRDScope
	onTimeout cleanupv1alpha1.TimeoutAction
	// converting are the CRDs (by name) whose conversion the run sets to None first.
	converting map[string]bool
}

// Foresee asks the API server, writing nothing, what would refuse or block
// the run (csv-cleaner's rights, a webhook or admission policy by a dry-run
// DELETE, the backup gate) and sets the verdict; with disc (nil leaves them
// out) it also reads what the garbage collector would delete. docs/plan.md
// says how.
func Foresee(ctx context.Context, c client.Client, disc discovery.DiscoveryInterface, d *DryRun, serviceAccount *types.NamespacedName) error {
	uninstall := d.Verdict == decide.VerdictUninstall || d.Verdict == decide.VerdictBlocked || d.Verdict == decide.VerdictIncomplete
	backup := d.backupPlan != nil && uninstall
	if d.foresight == nil && !backup {
		return nil // nothing would be deleted: nothing to foresee
	}
	if uninstall {
		if err := d.foreseeDependents(ctx, c, disc); err != nil {
			return err
		}
	}
	ids, err := d.identities(ctx, c, serviceAccount)
	if err != nil {
		return err
	}
	if backup {
		if err := d.foreseeBackup(ctx, c, ids); err != nil {
			return err
		}
	}
	if d.foresight == nil {
		d.settle()
		return nil
	}
	if err := d.foreseeAccess(ctx, c, ids); err != nil {
		return err
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

// identities are the identities whose rights the plan checks; a note says
// why there is none.
func (d *DryRun) identities(ctx context.Context, c client.Reader, serviceAccount *types.NamespacedName) ([]rbac.Identity, error) {
	if serviceAccount != nil {
		id := rbac.ServiceAccountIdentity(*serviceAccount, "--service-account")
		exists, err := rbac.ServiceAccountExists(ctx, c, id)
		if err != nil {
			return nil, err
		}
		if !exists {
			d.Notes = append(d.Notes, fmt.Sprintf("csv-cleaner's rights were not checked: %s (--service-account) does not exist", id))
			return nil, nil
		}
		return []rbac.Identity{id}, nil
	}
	found, gone, err := rbac.RunningIdentities(ctx, c)
	if apierrors.IsForbidden(err) {
		d.Notes = append(d.Notes, fmt.Sprintf("csv-cleaner's rights were not checked: its identity could not be looked up (%v); pass --service-account NAMESPACE/NAME", err))
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, id := range gone {
		d.Notes = append(d.Notes, fmt.Sprintf("%s, bound by %s, does not exist any more: its rights were not checked", id, id.From))
	}
	if len(found) == 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("csv-cleaner's rights were not checked: no identity it runs as was found (csv-cleaner binds the identity it runs as to its operand role at every start, labelled %s=true, unless it runs with --operand-role \"\"); pass --service-account NAMESPACE/NAME", rbac.OperandBindingLabel))
	}
	return found, nil
}

// foreseeAccess asks, for each identity, what the run checks of itself
// before its first delete, and judges the answers together.
func (d *DryRun) foreseeAccess(ctx context.Context, c client.Client, ids []rbac.Identity) error {
	judged := make([]decide.IdentityDenials, 0, len(ids))
	for _, id := range ids {
		access, err := refusal.AccessOf(ctx, d.foresight.scopes, d.foresight.onTimeout, accessOf(c, id))
		if apierrors.IsForbidden(err) {
			d.Notes = append(d.Notes, fmt.Sprintf("csv-cleaner's rights were not checked: %v", err))
			return nil
		}
		if err != nil {
			return err
		}
		judged = append(judged, decide.IdentityDenials{Identity: id.String() + " (" + id.From + ")", Decisive: id.GroupsKnown, Denied: access.Denied})
	}
	refusals, notes := decide.JudgeDenials(judged)
	for _, p := range refusals {
		d.Refusals = append(d.Refusals, Foreseen{Kind: p.Object, Reason: p.Reason, Message: p.Message})
		d.problems = append(d.problems, p)
		d.accessDenied = true
	}
	d.Notes = append(d.Notes, notes...)
	return nil
}

// dryRunDelete sends a server-side dry-run DELETE of the first object of
// the scope's kind that the plan deletes, and returns what the run's record
// would say of its refusal; nil when it would be accepted, or could not be
// asked (a note says why).
func (d *DryRun) dryRunDelete(ctx context.Context, c client.Client, s *decide.CRDScope) (*decide.Problem, error) {
	if s.CRD == nil {
		return nil, nil
	}
	i := -1
	for j, it := range d.Items {
		if it.Kind == s.Kind && it.Action == decide.ActionDelete && it.Reason == decide.DeleteOwnedOperand {
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
	why, refused := refusal.Classify(err)
	switch {
	case err == nil || apierrors.IsNotFound(err):
		return nil, nil
	case refused && why.Reason == cleanupv1alpha1.BlockedConversionFailed && d.foresight.converting[s.Name]:
		// The run sets the conversion to None before it deletes anything of the kind.
		d.Notes = append(d.Notes, fmt.Sprintf("the delete of %s %s was not dry-run: it needs the conversion webhook, which the uninstall turns off first", s.Kind, refusal.Path(it.Namespace, it.Name)))
		return nil, nil
	case refused && why.Reason == cleanupv1alpha1.BlockedForbidden:
		// RBAC refused the caller, not csv-cleaner: its rights are the review's.
		d.Notes = append(d.Notes, fmt.Sprintf("the delete of %s %s was not dry-run: %v", s.Kind, refusal.Path(it.Namespace, it.Name), err))
		return nil, nil
	case refused:
		meta := metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: it.Namespace, Name: it.Name}}
		return refusal.Problem([]refusal.Operand{{Kind: s.Kind, Object: refusal.Object{Obj: meta, Refusal: why}}}), nil
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return nil, err
	}
	d.Notes = append(d.Notes, fmt.Sprintf("the delete of %s %s could not be dry-run: %v", s.Kind, refusal.Path(it.Namespace, it.Name), err))
	return nil, nil
}

// accessOf asks whether the identity may do a verb on a scope's resource
// in every namespace (a SubjectAccessReview: as the run's
// SelfSubjectAccessReview, but for csv-cleaner's identity rather than the
// caller).
func accessOf(c client.Client, id rbac.Identity) func(context.Context, decide.CRDScope, string) (bool, error) {
	return func(ctx context.Context, s decide.CRDScope, verb string) (bool, error) {
		review := rbac.AccessReview(id, authorizationv1.ResourceAttributes{Verb: verb, Group: s.GVR.Group, Resource: s.GVR.Resource})
		if err := c.Create(ctx, review); err != nil {
			return false, fmt.Errorf("asking whether %s may %s %s: %w", id, verb, s.GVR.GroupResource(), err)
		}
		return review.Status.Allowed, nil
	}
}

package cleanup

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"
	authorizationv1 "k8s.io/api/authorization/v1"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// operandAccess is what csv-cleaner may do on the operands of the owned CRDs.
type operandAccess struct {
	// problem blocks the uninstall: a right it needs on a kind it deletes is missing.
	problem *decide.Problem
	// denied are the kinds' problems that problem joins, one a kind.
	denied []decide.Problem
	// unlisted are the CRDs (by name) whose instances are all kept and which
	// it may not list: they are noted, not counted.
	unlisted map[string]bool
}

// checkOperandAccess asks the API server, before anything is deleted, whether
// csv-cleaner may list, delete and (onTimeout: RemoveFinalizers) patch each
// owned CRD's instances cluster-wide (docs/architecture.md says why first).
func (e *Engine) checkOperandAccess(ctx context.Context, scopes []decide.CRDScope, onTimeout cleanupv1alpha1.TimeoutAction) (operandAccess, error) {
	return operandAccessOf(ctx, scopes, onTimeout, e.mayDo)
}

// operandAccessOf asks, with mayDo, the questions of checkOperandAccess:
// the run asks them of itself, a plan of csv-cleaner's ServiceAccount.
func operandAccessOf(ctx context.Context, scopes []decide.CRDScope, onTimeout cleanupv1alpha1.TimeoutAction,
	mayDo func(context.Context, decide.CRDScope, string) (bool, error)) (operandAccess, error) {
	access := operandAccess{unlisted: map[string]bool{}}
	// Every question at once: they are independent, and an uninstall
	// otherwise waits a round trip per kind and verb before its first delete.
	verbs := make([][]string, len(scopes))
	allowed := make([][]bool, len(scopes))
	g, gctx := errgroup.WithContext(ctx)
	for i, s := range scopes {
		if s.CRD == nil {
			continue
		}
		verbs[i] = []string{"list"}
		if s.KeepReason == "" {
			verbs[i] = append(verbs[i], "delete")
			if onTimeout == cleanupv1alpha1.TimeoutRemoveFinalizers {
				verbs[i] = append(verbs[i], "patch")
			}
		}
		allowed[i] = make([]bool, len(verbs[i]))
		for j, verb := range verbs[i] {
			g.Go(func() (err error) {
				allowed[i][j], err = mayDo(gctx, s, verb)
				return err
			})
		}
	}
	if err := g.Wait(); err != nil {
		return access, err
	}
	var problems []decide.Problem
	for i, s := range scopes {
		var denied []string
		for j, verb := range verbs[i] {
			if !allowed[i][j] {
				denied = append(denied, verb)
			}
		}
		switch {
		case len(denied) == 0:
		case s.KeepReason != "":
			access.unlisted[s.Name] = true
		default:
			problems = append(problems, *ForbiddenOperands(s, denied, ""))
		}
	}
	if len(problems) > 0 {
		access.denied = problems
		access.problem = decide.JoinProblems(problems)
	}
	return access, nil
}

// mayDo asks the API server whether csv-cleaner may do verb on the scope's
// resource in every namespace (a SelfSubjectAccessReview, which every
// identity may create).
func (e *Engine) mayDo(ctx context.Context, s decide.CRDScope, verb string) (bool, error) {
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: s.GVR.Group, Resource: s.GVR.Resource},
	}}
	if err := e.Client.Create(ctx, review); err != nil {
		return false, fmt.Errorf("asking whether csv-cleaner may %s %s: %w", verb, s.GVR.GroupResource(), err)
	}
	return review.Status.Allowed, nil
}

// ForbiddenOperands blocks an uninstall on the verbs csv-cleaner may not
// use on a kind's instances; first names an instance the API server
// refused, if one was.
func ForbiddenOperands(s decide.CRDScope, verbs []string, first string) *decide.Problem {
	object := s.Kind
	if first != "" {
		object += " " + first
	}
	gr := s.GVR.GroupResource().String()
	return &decide.Problem{Reason: cleanupv1alpha1.BlockedForbidden, Object: object,
		Message: fmt.Sprintf("csv-cleaner may not %s %s (kind %s): %s; the uninstall resumes on its own once it may",
			strings.Join(verbs, ", "), gr, s.Kind, rbac.HowToGrant(gr))}
}

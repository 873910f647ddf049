package refusal

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// Access is what csv-cleaner may do on the operands of the owned CRDs.
type Access struct {
	// Problem blocks the uninstall: a right it needs on a kind it deletes is missing.
	Problem *decide.Problem
	// Denied are the kinds' problems that Problem joins, one a kind.
	Denied []decide.Problem
	// Unlisted are the CRDs (by name) whose instances are all kept and which
	// it may not list: they are noted, not counted.
	Unlisted map[string]bool
}

// AccessOf asks, with mayDo, before anything is deleted, whether
// csv-cleaner may list, delete and (onTimeout: RemoveFinalizers) patch each
// owned CRD's instances cluster-wide (docs/architecture.md says why first):
// the run asks it of itself, a plan of csv-cleaner's ServiceAccount.
func AccessOf(ctx context.Context, scopes []decide.CRDScope, onTimeout cleanupv1alpha1.TimeoutAction,
	mayDo func(context.Context, decide.CRDScope, string) (bool, error)) (Access, error) {
	access := Access{Unlisted: map[string]bool{}}
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
			access.Unlisted[s.Name] = true
		default:
			problems = append(problems, *ForbiddenOperands(s, denied, ""))
		}
	}
	if len(problems) > 0 {
		access.Denied = problems
		access.Problem = decide.JoinProblems(problems)
	}
	return access, nil
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

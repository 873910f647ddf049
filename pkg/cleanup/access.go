package cleanup

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/refusal"
)

// checkOperandAccess asks the API server, before anything is deleted, whether
// csv-cleaner may list, delete and (onTimeout: RemoveFinalizers) patch each
// owned CRD's instances cluster-wide (docs/architecture.md says why first).
func (e *Engine) checkOperandAccess(ctx context.Context, scopes []decide.CRDScope, onTimeout cleanupv1alpha1.TimeoutAction) (refusal.Access, error) {
	return refusal.AccessOf(ctx, scopes, onTimeout, e.mayDo)
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

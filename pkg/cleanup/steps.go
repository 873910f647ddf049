package cleanup

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// countKept records every instance of the owned CRDs as kept for reason
// (plan.GateOperands' orphan), as plan.PlanOperands decides it.
func (r *Reconciler) countKept(ctx context.Context, u *uninstall, reason string) error {
	for i := range u.scopes {
		s := &u.scopes[i]
		if s.CRD == nil {
			continue
		}
		kept := map[string]int{reason: 0}
		err := r.gather().ForEachPage(ctx, s, func(page []metav1.PartialObjectMetadata) error {
			decided := plan.PlanOperands(plan.OperandInput{Scope: *s, Orphan: reason, Items: page})
			kept[reason] += decided.Kept[reason]
			u.rec.keep(decided.KeptRefs...)
			return nil
		})
		if refusal, refused := ClassifyRefusal(err); refused {
			// Nothing of the kind is deleted: a refusal to list them (a
			// missing right, a conversion webhook that fails) blocks nothing.
			logr.FromContextOrDiscard(ctx).Info("Not counting the kept instances of a kind the API server refuses to list", "kind", s.Kind, "reason", refusal.Reason)
			u.rec.count(s.Kind, 0, 0, map[string]int{reason: 0, cleanupv1alpha1.NoteNotListed: 0})
			continue
		}
		if err != nil {
			return err
		}
		u.rec.count(s.Kind, 0, 0, kept)
	}
	return nil
}

// clusterObjectStep deletes the ClusterRoles, ClusterRoleBindings and webhook
// configurations that carry the CSV's three owner labels.
func (r *Reconciler) clusterObjectStep(ctx context.Context, u *uninstall) (bool, error) {
	// The operands are gone or orphaned: the operator no longer needs its
	// cluster RBAC, and OLM (or the deletes below) may remove it.
	if err := r.releaseRBACOf(ctx, r.APIReader, csvKey(u.csv)); err != nil {
		if forbidden := (*rbac.ForbiddenError)(nil); errors.As(err, &forbidden) {
			return false, &plan.Problem{Reason: cleanupv1alpha1.BlockedForbidden, Object: rbac.KindName(forbidden.GVK) + " " + forbidden.Name, Message: err.Error()}
		}
		return false, err
	}
	var blocking []cleanupv1alpha1.ObjectRef
	for _, gvk := range rbac.OwnedKinds() {
		if plan.ClusterObjectFate(u.settings, rbac.KindName(gvk), rbac.IsWebhook(gvk)).Action != plan.ActionDelete {
			continue
		}
		owned, err := rbac.DeleteOwned(ctx, r.APIReader, r.Client, gvk, csvKey(u.csv))
		if owned.Found > 0 || err == nil {
			// Counted even when a delete failed: the next pass no longer finds what this one deleted.
			u.rec.count(rbac.KindName(gvk), owned.Found, len(owned.Remaining), nil)
		}
		if forbidden := (*rbac.ForbiddenError)(nil); errors.As(err, &forbidden) {
			return false, &plan.Problem{Reason: cleanupv1alpha1.BlockedForbidden, Object: rbac.KindName(gvk) + " " + forbidden.Name, Message: forbidden.Error()}
		}
		if err != nil {
			return false, err
		}
		blocking = append(blocking, refs(rbac.KindName(gvk), owned.Remaining, "Finalizers")...)
	}
	u.rec.setBlocking(blocking)
	return len(blocking) == 0, nil
}

// Deleting a CRD (crds: Delete) takes delete on every CRD: RBAC cannot
// narrow it; the admission policy of manifests/admission refuses a CRD
// without OLM's provenance.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=delete

// crdStep deletes the owned CRDs plan.CRDFate lets go: with crds: Delete,
// those that pass the provenance check, that no other live CSV owns and
// that have no instances left.
func (r *Reconciler) crdStep(ctx context.Context, u *uninstall) (bool, error) {
	if u.settings.CRDs != cleanupv1alpha1.Delete {
		return true, nil // the step is off: the CRDs are not looked at, nor recorded
	}
	kept := map[string]int{}
	found, remaining := 0, 0
	// What a pass did is counted even when it fails part way: the next
	// pass no longer finds a CRD this one deleted once it is gone.
	fail := func(err error) (bool, error) {
		u.rec.count(plan.CRDKind, found, remaining, kept)
		return false, err
	}
	for i := range u.scopes {
		s := &u.scopes[i]
		if s.CRD == nil {
			continue
		}
		fate := plan.CRDFate(u.settings, *s, false)
		if fate.Action == plan.ActionDelete && s.CRD.DeletionTimestamp.IsZero() {
			left, err := r.gather().InstancesLeft(ctx, s)
			if apierrors.IsForbidden(err) {
				return fail(forbiddenOperands(*s, []string{"list"}, ""))
			}
			if err != nil {
				return fail(err)
			}
			fate = plan.CRDFate(u.settings, *s, left)
		}
		if fate.Action == plan.ActionKeep {
			kept[fate.Reason]++
			u.rec.keep(cleanupv1alpha1.ObjectRef{Kind: plan.CRDKind, Name: s.Name, Reason: fate.Reason})
			continue
		}
		found++
		if !s.CRD.DeletionTimestamp.IsZero() {
			remaining++
			continue
		}
		uid := s.CRD.UID
		err := r.Client.Delete(ctx, s.CRD.DeepCopy(), client.Preconditions{UID: &uid})
		switch {
		case err == nil:
			remaining++ // the API server removes it once its instances are cleaned up
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		case apierrors.IsForbidden(err):
			remaining++
			return fail(&plan.Problem{Reason: cleanupv1alpha1.BlockedForbidden, Object: "CustomResourceDefinition " + s.Name, Message: err.Error()})
		default:
			remaining++
			return fail(fmt.Errorf("deleting CRD %s: %w", s.Name, err))
		}
	}
	u.rec.count(plan.CRDKind, found, remaining, kept)
	return remaining == 0, nil
}

func withFinalizers(objs []metav1.PartialObjectMetadata) []metav1.PartialObjectMetadata {
	var out []metav1.PartialObjectMetadata
	for _, o := range objs {
		if len(o.Finalizers) > 0 {
			out = append(out, o)
		}
	}
	return out
}

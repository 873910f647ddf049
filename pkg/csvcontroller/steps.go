package csvcontroller

import (
	"context"
	"errors"
	"fmt"
	"sync"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/pkg/refusal"
)

// operandStep deletes the CSV's operands as decide.PlanOperands decides and
// waits for them to be gone; past operandTimeout, onTimeout decides. It
// gathers what the decisions read, stops at what decide.GateOperands says
// blocks (or keeps every operand), then deletes on the engine
// (Uninstall.DeleteInstances), as a ClusterExtension's operand step does.
func (r *Reconciler) operandStep(ctx context.Context, u *cleanup.Uninstall, csv *operatorsv1alpha1.ClusterServiceVersion, v decide.Verdict) (bool, error) {
	in, err := r.gather().Operands(ctx, csv, v, u.Settings())
	if err != nil {
		return false, err
	}
	u.Scopes(in.Scopes)
	orphan, problem := decide.GateOperands(in.Gate)
	switch {
	case problem != nil:
		return false, problem
	case orphan != "":
		return true, u.KeepInstances(ctx, orphan)
	}
	return u.DeleteInstances(ctx, in.Targets)
}

// clusterObjectStep deletes the ClusterRoles, ClusterRoleBindings and webhook
// configurations that carry the CSV's three owner labels, in one round of
// reads: the webhook configurations while the hold is released, the RBAC as
// the release found it.
func (r *Reconciler) clusterObjectStep(ctx context.Context, u *cleanup.Uninstall, csv *operatorsv1alpha1.ClusterServiceVersion) (bool, error) {
	var kinds []schema.GroupVersionKind
	for _, gvk := range rbac.OwnedKinds() {
		if decide.ClusterObjectFate(u.Settings(), rbac.KindName(gvk), rbac.IsWebhook(gvk)).Action == decide.ActionDelete {
			kinds = append(kinds, gvk)
		}
	}
	key := objects.Key(csv)
	owned, errs := make([]rbac.Owned, len(kinds)), make([]error, len(kinds))
	var wg sync.WaitGroup
	for i, gvk := range kinds {
		if rbac.IsWebhook(gvk) {
			wg.Go(func() { owned[i], errs[i] = rbac.DeleteOwned(ctx, r.APIReader, r.Client, gvk, key) })
		}
	}
	// The operands are gone or orphaned: the operator no longer needs its
	// cluster RBAC, and OLM (or the deletes below) may remove it.
	seen, released := r.releaseRBACSeen(ctx, r.APIReader, key)
	for i, gvk := range kinds {
		switch {
		case rbac.IsWebhook(gvk):
		case released != nil:
			errs[i] = released // not deleted: the hold may still be on
		default:
			wg.Go(func() { owned[i], errs[i] = rbac.DeleteListed(ctx, r.Client, gvk, key, seen[gvk]) })
		}
	}
	wg.Wait()
	var blocking []cleanupv1alpha1.ObjectRef
	for i, gvk := range kinds {
		if owned[i].Found > 0 || errs[i] == nil {
			// Counted even when a delete failed: the next pass no longer finds what this one deleted.
			u.Count(rbac.KindName(gvk), owned[i].Found, len(owned[i].Remaining), nil)
		}
		blocking = append(blocking, cleanup.Refs(rbac.KindName(gvk), owned[i].Remaining, "Finalizers")...)
	}
	for _, err := range append([]error{released}, errs...) {
		if forbidden := (*rbac.ForbiddenError)(nil); errors.As(err, &forbidden) {
			return false, &decide.Problem{Reason: cleanupv1alpha1.BlockedForbidden, Object: rbac.KindName(forbidden.GVK) + " " + forbidden.Name, Message: err.Error()}
		}
		if err != nil {
			return false, err
		}
	}
	u.SetBlocking(blocking)
	return len(blocking) == 0, nil
}

// Deleting a CRD (crds: Delete) takes delete on every CRD: RBAC cannot
// narrow it; the admission policy of manifests/admission refuses a CRD
// without OLM's provenance.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=delete

// crdStep deletes the owned CRDs decide.CRDFate lets go: with crds: Delete,
// those that pass the provenance check, that no other live CSV owns and
// that have no instances left.
func (r *Reconciler) crdStep(ctx context.Context, u *cleanup.Uninstall) (bool, error) {
	if u.Settings().CRDs != cleanupv1alpha1.Delete {
		return true, nil // the step is off: the CRDs are not looked at, nor recorded
	}
	kept := map[string]int{}
	found, remaining := 0, 0
	// What a pass did is counted even when it fails part way: the next
	// pass no longer finds a CRD this one deleted once it is gone.
	fail := func(err error) (bool, error) {
		u.Count(decide.CRDKind, found, remaining, kept)
		return false, err
	}
	scopes := u.CRDScopes()
	for i := range scopes {
		s := &scopes[i]
		if s.CRD == nil {
			continue
		}
		fate := decide.CRDFate(u.Settings(), *s, false)
		if fate.Action == decide.ActionDelete && s.CRD.DeletionTimestamp.IsZero() {
			left, err := u.InstancesLeft(ctx, s)
			if apierrors.IsForbidden(err) {
				return fail(refusal.ForbiddenOperands(*s, []string{"list"}, ""))
			}
			if err != nil {
				return fail(err)
			}
			fate = decide.CRDFate(u.Settings(), *s, left)
		}
		if fate.Action == decide.ActionKeep {
			kept[fate.Reason]++
			u.Keep(cleanupv1alpha1.ObjectRef{Kind: decide.CRDKind, Name: s.Name, Reason: fate.Reason})
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
			return fail(&decide.Problem{Reason: cleanupv1alpha1.BlockedForbidden, Object: "CustomResourceDefinition " + s.Name, Message: err.Error()})
		default:
			remaining++
			return fail(fmt.Errorf("deleting CRD %s: %w", s.Name, err))
		}
	}
	u.Count(decide.CRDKind, found, remaining, kept)
	return remaining == 0, nil
}

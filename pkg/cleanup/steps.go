package cleanup

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// operandStep deletes the CSV's operands as PlanOperands decides and waits
// for them to be gone; past operandTimeout, onTimeout decides.
func (r *Reconciler) operandStep(ctx context.Context, u *uninstall) (bool, error) {
	// Targets OLM itself cannot tell block everything, kept operands or not.
	if problem, err := r.operatorGroupProblem(ctx, u.csv); err != nil || problem != nil {
		return false, errors.Join(err, asError(problem))
	}
	crds, err := r.ownedCRDs(ctx, u.csv)
	if err != nil {
		return false, err
	}
	others, err := r.otherOwners(ctx, u.csv)
	if err != nil {
		return false, err
	}
	scopes, problems := ScopeCRDs(ScopeInput{
		CSV: csvKey(u.csv), Owned: u.csv.Spec.CustomResourceDefinitions.Owned, CRDs: crds,
		CRDProvenance: u.settings.CRDProvenance, OtherOwners: others,
	})
	u.scopes = scopes

	if orphan := r.orphanReason(u); orphan != "" {
		return true, r.countKept(ctx, u, orphan)
	}
	if len(problems) > 0 {
		return false, joinProblems(problems)
	}
	targets, problem, err := r.targetNamespaces(ctx, u.csv)
	if err != nil || problem != nil {
		return false, errors.Join(err, asError(problem))
	}
	access, err := r.checkOperandAccess(ctx, scopes, u.settings.OnTimeout)
	if err != nil || access.problem != nil {
		return false, errors.Join(err, asError(access.problem))
	}

	type waiting struct {
		scope *CRDScope
		pass  operandPass
		// refused are what the API server refused: objects, or the kind's list.
		refused []refusedObject
	}
	var passes []waiting
	var blocking []cleanupv1alpha1.ObjectRef
	var refused []refusedOperand
	conversionDisabled := false
	// Whether the operator is available is read once a pass, when first needed.
	var unavailable *Problem
	availabilityRead := false
	operatorUnavailable := func() (*Problem, error) {
		if !availabilityRead {
			p, err := r.unavailableOperator(ctx, u.csv)
			if err != nil {
				return nil, err
			}
			unavailable, availabilityRead = p, true
		}
		return unavailable, nil
	}
	for i := range scopes {
		s := &scopes[i]
		switch {
		case s.CRD == nil:
			u.rec.count(s.Kind, 0, 0, map[string]int{cleanupv1alpha1.NoteCRDNotFound: 0})
			continue
		case access.unlisted[s.Name]:
			u.rec.count(s.Kind, 0, 0, map[string]int{s.KeepReason: 0, cleanupv1alpha1.NoteNotListed: 0})
			continue
		}
		pass, err := r.deleteOperands(ctx, s, targets, *u.csv.DeletionTimestamp)
		if refusal, ok := ClassifyRefusal(err); ok {
			if refusal.Reason == cleanupv1alpha1.BlockedConversionFailed && mayDisableConversion(*s, u.settings) {
				gone, err := operatorUnavailable()
				if err != nil {
					return false, err
				}
				if gone != nil {
					changed, err := r.disableConversion(ctx, u, s, refusal)
					if err != nil {
						return false, err
					}
					if changed {
						conversionDisabled = true
						continue // listed again on the next pass
					}
				}
			}
			// The kind cannot even be listed: nothing of it is deleted, the other kinds go on.
			if refusal.Reason == cleanupv1alpha1.BlockedForbidden {
				refusal.Message = forbiddenOperands(*s, []string{"list"}, "").Message
			}
			w := waiting{scope: s, refused: []refusedObject{{refusal: refusal}}}
			passes = append(passes, w)
			refused = append(refused, refusedOperand{kind: s.Kind, refusedObject: w.refused[0]})
			u.rec.count(s.Kind, 0, 0, map[string]int{refusal.Reason: 0, cleanupv1alpha1.NoteNotListed: 0})
			blocking = append(blocking, cleanupv1alpha1.ObjectRef{Kind: s.Kind, Reason: refusal.Reason})
			continue
		}
		if err != nil {
			return false, err
		}
		if pass.deleted > 0 {
			r.event(u.csv, corev1.EventTypeNormal, "OperandsDeleted", "Delete", "Deleted %d %s objects", pass.deleted, s.Kind)
		}
		// What was deleted is counted even when the API server refused some
		// deletes: the record shows every step that was taken.
		u.rec.count(s.Kind, pass.found, len(pass.remaining)+len(pass.refused), pass.kept)
		u.rec.keep(pass.keptRefs...)
		for _, f := range pass.refused {
			if f.refusal.Reason == cleanupv1alpha1.BlockedForbidden {
				f.refusal.Message = forbiddenOperands(*s, []string{"delete"}, f.obj.Namespace+"/"+f.obj.Name).Message
			}
			refused = append(refused, refusedOperand{kind: s.Kind, refusedObject: f})
			blocking = append(blocking, refs(s.Kind, []metav1.PartialObjectMetadata{f.obj}, f.refusal.Reason)...)
		}
		if len(pass.remaining) > 0 || len(pass.refused) > 0 {
			passes = append(passes, waiting{scope: s, pass: pass, refused: pass.refused})
			blocking = append(blocking, refs(s.Kind, pass.remaining, "Finalizers")...)
		}
	}
	u.rec.setBlocking(blocking)
	if conversionDisabled {
		return false, nil
	}
	if len(passes) == 0 {
		return true, nil
	}
	if _, err := operatorUnavailable(); err != nil {
		return false, err
	}
	if len(refused) > 0 && unavailable != nil {
		// The operator's own webhooks, which nobody serves any more, never block its uninstall for good.
		deleted, err := r.deleteRefusingWebhooks(ctx, u, refused)
		if err != nil || deleted > 0 {
			return false, err // the next pass deletes again
		}
	}
	refusedProblem := refusalProblem(refused)
	timedOut := u.now.Sub(u.csv.DeletionTimestamp.Time) >= u.settings.OperandTimeout
	if unavailable != nil {
		then := fmt.Sprintf("onTimeout %s applies once operandTimeout %s has passed", u.settings.OnTimeout, u.settings.OperandTimeout)
		if timedOut {
			then = fmt.Sprintf("operandTimeout %s has passed and onTimeout %s keeps waiting", u.settings.OperandTimeout, u.settings.OnTimeout)
		}
		unavailable.Message = fmt.Sprintf("%d operands wait for finalizers and %s; %s", len(blocking), unavailable.Message, then)
	}
	if !timedOut {
		switch {
		case refusedProblem != nil:
			return false, refusedProblem
		case unavailable != nil:
			return false, unavailable
		}
		return false, nil
	}

	switch u.settings.OnTimeout {
	case cleanupv1alpha1.TimeoutRemoveFinalizers:
		for _, w := range passes {
			if len(w.pass.remaining) == 0 {
				continue
			}
			gvk := w.scope.GVR.GroupVersion().WithKind(w.scope.CRD.Spec.Names.Kind)
			stripped, err := r.stripFinalizers(ctx, gvk, w.pass.remaining)
			if refusal, ok := ClassifyRefusal(err); ok {
				err = &Problem{Reason: refusal.Reason, Object: w.scope.Kind,
					Message: fmt.Sprintf("onTimeout RemoveFinalizers: the API server refused to remove the finalizers of %s objects: %s; %s", w.scope.Kind, refusal.Message, refusal.advice())}
			}
			for i := range stripped {
				obj := stripped[i].DeepCopy()
				obj.SetGroupVersionKind(gvk)
				r.event(obj, corev1.EventTypeWarning, "FinalizersRemoved", "RemoveFinalizers",
					"csv-cleaner removed finalizers %v after operandTimeout %s of the uninstall of CSV %s", stripped[i].Finalizers, u.settings.OperandTimeout, csvKey(u.csv))
			}
			if err != nil {
				return false, err
			}
		}
		if refusedProblem != nil {
			refusedProblem.Message += "; onTimeout RemoveFinalizers removed the finalizers it could, but cannot delete what the API server refuses to delete"
			return false, refusedProblem
		}
		return false, nil
	case cleanupv1alpha1.TimeoutOrphan:
		var keptRefs []cleanupv1alpha1.ObjectRef
		for _, w := range passes {
			kept := w.pass.kept
			if kept == nil {
				kept = map[string]int{}
			}
			kept[cleanupv1alpha1.KeepTimedOut] += len(w.pass.remaining)
			u.rec.keep(refs(w.scope.Kind, w.pass.remaining, cleanupv1alpha1.KeepTimedOut)...)
			for _, f := range w.refused {
				if f.obj.Name == "" { // the kind could not be listed: noted, not counted
					kept[f.refusal.Reason] += 0
					kept[cleanupv1alpha1.NoteNotListed] += 0
					continue
				}
				kept[f.refusal.Reason]++
				keptRefs = append(keptRefs, refs(w.scope.Kind, []metav1.PartialObjectMetadata{f.obj}, f.refusal.Reason)...)
			}
			u.rec.count(w.scope.Kind, w.pass.found, 0, kept)
		}
		// The refused objects stay, counted under the reason the API server gave, and named in an Event.
		u.rec.keep(keptRefs...)
		for _, ref := range keptRefs {
			r.event(u.csv, corev1.EventTypeWarning, "OperandKept", "Orphan",
				"Kept %s %s after operandTimeout %s (onTimeout Orphan): the API server refused to delete it (%s)", ref.Kind, path(ref.Namespace, ref.Name), u.settings.OperandTimeout, ref.Reason)
		}
		u.rec.setBlocking(nil)
		return true, nil
	default:
		switch {
		case refusedProblem != nil:
			return false, refusedProblem
		case unavailable != nil:
			return false, unavailable
		}
		return false, &Problem{Reason: cleanupv1alpha1.BlockedOperandsRemaining, Object: blocking[0].Kind + " " + blocking[0].Namespace + "/" + blocking[0].Name,
			Message: fmt.Sprintf("%d operands still exist after operandTimeout %s, held by finalizers that nobody removes; see status.blocking, or set onTimeout to RemoveFinalizers or Orphan", len(blocking), u.settings.OperandTimeout)}
	}
}

// refusedOperand is an operand, or an operand kind, the API server refused.
type refusedOperand struct {
	kind string
	refusedObject
}

// refusalProblem blocks an uninstall on what the API server refused, named
// by the first refused object and what refused it; nil when nothing was.
func refusalProblem(refused []refusedOperand) *Problem {
	if len(refused) == 0 {
		return nil
	}
	first := refused[0]
	object, verb := first.kind, "list"
	if first.obj.Name != "" {
		object, verb = first.kind+" "+path(first.obj.Namespace, first.obj.Name), "delete"
	}
	if first.refusal.Reason == cleanupv1alpha1.BlockedForbidden {
		return &Problem{Reason: cleanupv1alpha1.BlockedForbidden, Object: object, Message: first.refusal.Message}
	}
	return &Problem{Reason: first.refusal.Reason, Object: object,
		Message: fmt.Sprintf("the API server refused %d of csv-cleaner's requests on operands (first: to %s %s): %s; %s",
			len(refused), verb, object, first.refusal.Message, first.refusal.advice())}
}

func path(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// orphanReason says why operands are kept whole, or "" when they are deleted.
func (r *Reconciler) orphanReason(u *uninstall) string {
	switch {
	case u.verdict.OptedOut:
		return cleanupv1alpha1.KeepOptedOut
	case u.settings.Operands == cleanupv1alpha1.Orphan:
		return cleanupv1alpha1.KeepPolicyOrphan
	}
	return ""
}

// countKept records every instance of the owned CRDs as kept for reason.
func (r *Reconciler) countKept(ctx context.Context, u *uninstall, reason string) error {
	for _, s := range u.scopes {
		if s.CRD == nil {
			continue
		}
		n := 0
		err := r.forEachPage(ctx, s.GVR, s.CRD.Spec.Names.Kind, func(page []metav1.PartialObjectMetadata) error {
			n += len(page)
			u.rec.keep(refs(s.Kind, page, reason)...)
			return nil
		})
		switch {
		case apierrors.IsForbidden(err):
			// Nothing of the kind is deleted: a missing right to count them blocks nothing.
			u.rec.count(s.Kind, 0, 0, map[string]int{reason: 0, cleanupv1alpha1.NoteNotListed: 0})
			continue
		case err != nil:
			return err
		}
		u.rec.count(s.Kind, 0, 0, map[string]int{reason: n})
	}
	return nil
}

// clusterObjectStep deletes the ClusterRoles, ClusterRoleBindings and webhook
// configurations that carry the CSV's three owner labels.
func (r *Reconciler) clusterObjectStep(ctx context.Context, u *uninstall) (bool, error) {
	// The operands are gone or orphaned: the operator no longer needs its
	// cluster RBAC, and OLM (or the deletes below) may remove it.
	if err := r.releaseRBACSelected(ctx, r.APIReader, rbac.OwnerSelector(csvKey(u.csv))); err != nil {
		if forbidden := (*rbac.ForbiddenError)(nil); errors.As(err, &forbidden) {
			return false, &Problem{Reason: cleanupv1alpha1.BlockedForbidden, Object: rbac.KindName(forbidden.GVK) + " " + forbidden.Name, Message: err.Error()}
		}
		return false, err
	}
	var kinds []schema.GroupVersionKind
	if u.settings.ClusterRBAC == cleanupv1alpha1.Delete {
		kinds = append(kinds, rbac.ClusterRBACKinds...)
	}
	if u.settings.Webhooks == cleanupv1alpha1.Delete {
		kinds = append(kinds, rbac.WebhookKinds...)
	}
	var blocking []cleanupv1alpha1.ObjectRef
	for _, gvk := range kinds {
		owned, err := rbac.DeleteOwned(ctx, r.APIReader, r.Client, gvk, csvKey(u.csv))
		if forbidden := (*rbac.ForbiddenError)(nil); errors.As(err, &forbidden) {
			return false, &Problem{Reason: cleanupv1alpha1.BlockedForbidden, Object: rbac.KindName(gvk) + " " + forbidden.Name, Message: forbidden.Error()}
		}
		if err != nil {
			return false, err
		}
		u.rec.count(rbac.KindName(gvk), owned.Found, len(owned.Remaining), nil)
		blocking = append(blocking, refs(rbac.KindName(gvk), owned.Remaining, "Finalizers")...)
	}
	u.rec.setBlocking(blocking)
	return len(blocking) == 0, nil
}

// Deleting a CRD (crds: Delete) takes delete on every CRD: RBAC cannot
// narrow it; the admission policy of manifests/admission refuses a CRD
// without OLM's provenance.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=delete

var crdKind = rbac.KindName(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))

// crdStep deletes, with crds: Delete, the owned CRDs that pass the
// provenance check, that no other live CSV owns and that have no instances
// left (deleting a CRD deletes every instance, whoever made it).
func (r *Reconciler) crdStep(ctx context.Context, u *uninstall) (bool, error) {
	if u.settings.CRDs != cleanupv1alpha1.Delete {
		return true, nil
	}
	kept := map[string]int{}
	found, remaining := 0, 0
	for _, s := range u.scopes {
		if s.CRD == nil {
			continue
		}
		if reason := crdKeepReason(s); reason != "" {
			kept[reason]++
			u.rec.keep(cleanupv1alpha1.ObjectRef{Kind: crdKind, Name: s.Name, Reason: reason})
			continue
		}
		found++
		if !s.CRD.DeletionTimestamp.IsZero() {
			remaining++
			continue
		}
		left := &metav1.PartialObjectMetadataList{}
		left.SetGroupVersionKind(s.GVR.GroupVersion().WithKind(s.CRD.Spec.Names.Kind + "List"))
		if err := r.APIReader.List(ctx, left, client.Limit(1)); err != nil {
			if apierrors.IsForbidden(err) {
				return false, forbiddenOperands(s, []string{"list"}, "")
			}
			return false, fmt.Errorf("listing what is left of %s: %w", s.Name, err)
		}
		if len(left.Items) > 0 {
			found--
			kept[cleanupv1alpha1.KeepHasInstances]++
			u.rec.keep(cleanupv1alpha1.ObjectRef{Kind: crdKind, Name: s.Name, Reason: cleanupv1alpha1.KeepHasInstances})
			continue
		}
		uid := s.CRD.UID
		err := r.Client.Delete(ctx, s.CRD.DeepCopy(), client.Preconditions{UID: &uid})
		switch {
		case err == nil:
			remaining++ // the API server removes it once its instances are cleaned up
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		case apierrors.IsForbidden(err):
			return false, &Problem{Reason: cleanupv1alpha1.BlockedForbidden, Object: "CustomResourceDefinition " + s.Name, Message: err.Error()}
		default:
			return false, fmt.Errorf("deleting CRD %s: %w", s.Name, err)
		}
	}
	u.rec.count(crdKind, found, remaining, kept)
	return remaining == 0, nil
}

// crdKeepReason says why an owned CRD is never deleted, whatever its
// instances: it lacks OLM's provenance for this CSV, or another live CSV
// owns it too. "" when it may be deleted once its instances are gone.
func crdKeepReason(s CRDScope) string {
	switch {
	case !s.Proven:
		return cleanupv1alpha1.KeepUnproven
	case len(s.Others) > 0:
		return cleanupv1alpha1.KeepSharedCRD
	}
	return ""
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

// joinProblems reports several problems as one, naming every object.
func joinProblems(ps []Problem) *Problem {
	if len(ps) == 1 {
		return &ps[0]
	}
	objs, msgs := make([]string, 0, len(ps)), make([]string, 0, len(ps))
	for _, p := range ps {
		objs = append(objs, p.Object)
		msgs = append(msgs, p.Message)
	}
	return &Problem{Reason: ps[0].Reason, Object: strings.Join(objs, ", "), Message: strings.Join(msgs, "; ")}
}

func asError(p *Problem) error {
	if p == nil {
		return nil
	}
	return p
}

package cleanup

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

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

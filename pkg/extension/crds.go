package extension

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
)

// Detaching a CRD takes update on every CRD (not patch: a server-side
// apply patch can create a CRD): RBAC cannot narrow it; the admission
// policy of manifests/admission lets csv-cleaner's updates of a CRD OLM v1
// applied only remove the ownerReferences to a ClusterExtension or a
// ClusterObjectSet and OLM v1's owner labels.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=update

// crdStep decides each owned CRD's fate (plan.ExtensionCRDFate): one the
// garbage collector may take (crds: Delete, no instance left) is left to
// it; every other is detached from the extension (its ownerReference and
// owner labels removed, plan.DetachFromExtension), so that the garbage
// collector keeps it, with every instance left, once the extension goes.
// A CRD already being deleted (--cascade=foreground) cannot be kept.
func (r *Reconciler) crdStep(ctx context.Context, x *cleanup.Uninstall, in inputs, s plan.Settings) (bool, error) {
	kept := map[string]int{}
	collected, going := 0, 0
	done := true
	for i := range in.scopes {
		sc := &in.scopes[i]
		left := false
		if s.CRDs == cleanupv1alpha1.Delete {
			var err error
			if left, err = x.InstancesLeft(ctx, sc); err != nil {
				return false, fmt.Errorf("listing the instances of CRD %s: %w", sc.Name, err)
			}
		}
		fate := plan.ExtensionCRDFate(s, *sc, left)
		if fate.Action == plan.ActionDelete {
			collected++
			continue
		}
		if !sc.CRD.DeletionTimestamp.IsZero() {
			going++ // the garbage collector is deleting it already (foreground)
			continue
		}
		kept[fate.Reason]++
		x.Keep(cleanupv1alpha1.ObjectRef{Kind: plan.CRDKind, Name: sc.Name, Reason: fate.Reason})
		detached, err := r.detach(ctx, x, sc, in)
		if err != nil {
			return false, err
		}
		done = done && detached
	}
	x.Count(plan.CRDKind, collected+going, going, kept)
	return done, nil
}

// detach removes the extension's ownerReference (or its ClusterObjectSet's)
// and owner labels from a CRD, guarded by the resourceVersion read in this
// pass: a CRD changed meanwhile is read again on the next pass (detached
// is false until then).
func (r *Reconciler) detach(ctx context.Context, x *cleanup.Uninstall, sc *plan.CRDScope, in inputs) (detached bool, _ error) {
	d, needed := plan.DetachFromExtension(sc.CRD, in.ext, in.sets)
	if !needed {
		return true, nil
	}
	// The whole CRD as read in this pass: its resourceVersion guards the update.
	crd := sc.CRD.DeepCopy()
	crd.OwnerReferences = d.OwnerReferences
	for _, l := range d.DropLabels {
		delete(crd.Labels, l)
	}
	err := r.Client.Update(ctx, crd)
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case apierrors.IsConflict(err):
		return false, nil
	case apierrors.IsForbidden(err):
		return false, &plan.Problem{Reason: cleanupv1alpha1.BlockedForbidden, Object: "CustomResourceDefinition " + sc.Name,
			Message: fmt.Sprintf("csv-cleaner may not detach CRD %s from ClusterExtension %s: %v", sc.Name, in.ext.Name, err)}
	case err != nil:
		return false, fmt.Errorf("detaching CRD %s from ClusterExtension %s: %w", sc.Name, in.ext.Name, err)
	}
	x.Event(corev1.EventTypeNormal, "CRDDetached", "Detach",
		"Detached CRD %s from the ClusterExtension (its ownerReference and owner labels removed): the garbage collector keeps it, with its custom resources", sc.Name)
	return true, nil
}

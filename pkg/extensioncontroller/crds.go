package extensioncontroller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide/olmv1"
)

// Detaching a CRD takes update on every CRD (not patch: a server-side
// apply patch can create a CRD): RBAC cannot narrow it; the admission
// policy of manifests/admission lets csv-cleaner's updates of a CRD OLM v1
// applied only remove the ownerReferences to a ClusterExtension or a
// ClusterObjectSet and OLM v1's owner labels.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=update

// crdOutcome is what the CRD step came to.
type crdOutcome struct {
	done bool
	// heldTerminating counts the CRDs being deleted that instances the
	// uninstall keeps hold (onTimeout: Orphan under --cascade=foreground).
	heldTerminating int
}

// held says, for the Completed message, what stays being deleted.
func (c crdOutcome) held() string {
	if c.heldTerminating == 0 {
		return ""
	}
	return fmt.Sprintf("; the custom resources it kept remain, being deleted and held by finalizers nobody removes: "+
		"%d CRDs the garbage collector is deleting (--cascade=foreground) stay until they are gone, and the ClusterExtension with them (foregroundDeletion)", c.heldTerminating)
}

// crdStep leaves to the garbage collector each owned CRD that
// olmv1.ExtensionCRDFate lets go and detaches every other
// (olmv1.DetachFromExtension); a CRD already being deleted is waited for
// (docs/clusterextensions.md). A CRD found gone counts as deleted.
func (r *Reconciler) crdStep(ctx context.Context, x *cleanup.Uninstall, in inputs, s decide.Settings) (crdOutcome, error) {
	out := crdOutcome{done: true}
	kept := map[string]int{}
	collected, going := 0, 0
	for i := range in.scopes {
		sc := &in.scopes[i]
		left := false
		if s.CRDs == cleanupv1alpha1.Delete || !sc.CRD.DeletionTimestamp.IsZero() {
			var err error
			if left, err = x.InstancesLeft(ctx, sc); gone(err) {
				collected++ // gone since this pass read it
				continue
			} else if err != nil {
				return out, fmt.Errorf("listing the instances of CRD %s: %w", sc.Name, err)
			}
		}
		fate := olmv1.ExtensionCRDFate(s, *sc, left)
		switch {
		case fate.Reason == decide.DeleteTerminating && left:
			// The operand step is done: what is left is what the uninstall keeps.
			kept[cleanupv1alpha1.KeepHasInstances]++
			x.Keep(cleanupv1alpha1.ObjectRef{Kind: decide.CRDKind, Name: sc.Name, Reason: cleanupv1alpha1.KeepHasInstances})
			out.heldTerminating++
			continue
		case fate.Reason == decide.DeleteTerminating:
			going++ // no instance left: the API server removes it in a moment
			out.done = false
			continue
		case fate.Action == decide.ActionDelete:
			collected++
			continue
		}
		kept[fate.Reason]++
		x.Keep(cleanupv1alpha1.ObjectRef{Kind: decide.CRDKind, Name: sc.Name, Reason: fate.Reason})
		detached, err := r.detach(ctx, x, sc, in)
		if err != nil {
			return out, err
		}
		out.done = out.done && detached
	}
	x.Count(decide.CRDKind, collected+going, going, kept)
	return out, nil
}

// countTerminating counts the CRDs being deleted (--cascade=foreground)
// as found and remaining, before the operand step: a CRD the garbage
// collector removes with its last instance is gone before the CRD step
// can see it, and the record still counts it, found and deleted (the CRD
// step's count keeps the most found).
func countTerminating(x *cleanup.Uninstall, scopes []decide.CRDScope) {
	n := 0
	for i := range scopes {
		if !scopes[i].CRD.DeletionTimestamp.IsZero() {
			n++
		}
	}
	if n > 0 {
		x.Count(decide.CRDKind, n, n, nil)
	}
}

// gone reports whether a list of a CRD's instances failed because the CRD
// itself is gone.
func gone(err error) bool {
	return apierrors.IsNotFound(err) || meta.IsNoMatchError(err)
}

// detach removes the extension's ownerReference (or its ClusterObjectSet's)
// and owner labels from a CRD, guarded by the resourceVersion read in this
// pass: a CRD changed meanwhile is read again on the next pass (detached
// is false until then).
func (r *Reconciler) detach(ctx context.Context, x *cleanup.Uninstall, sc *decide.CRDScope, in inputs) (detached bool, _ error) {
	d, needed := olmv1.DetachFromExtension(sc.CRD, in.ext, in.sets)
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
		return false, &decide.Problem{Reason: cleanupv1alpha1.BlockedForbidden, Object: "CustomResourceDefinition " + sc.Name,
			Message: fmt.Sprintf("csv-cleaner may not detach CRD %s from ClusterExtension %s: %v", sc.Name, in.ext.Name, err)}
	case err != nil:
		return false, fmt.Errorf("detaching CRD %s from ClusterExtension %s: %w", sc.Name, in.ext.Name, err)
	}
	x.Event(corev1.EventTypeNormal, "CRDDetached", "Detach",
		"Detached CRD %s from the ClusterExtension (its ownerReference and owner labels removed): the garbage collector keeps it, with its custom resources", sc.Name)
	return true, nil
}

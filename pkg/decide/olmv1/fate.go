package olmv1

import (
	"slices"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// Cascade is how a ClusterExtension is being deleted, as its finalizers
// say (kubectl delete --cascade).
type Cascade string

const (
	// CascadeBackground (kubectl's default): the garbage collector deletes the
	// dependents once the extension is gone, so they stay while csv-cleaner holds it.
	CascadeBackground Cascade = "Background"
	// CascadeForeground: the garbage collector deletes the dependents now, while the extension waits.
	CascadeForeground Cascade = "Foreground"
	// CascadeOrphan: the garbage collector strips the dependents' ownerReferences; nothing is deleted.
	CascadeOrphan Cascade = "Orphan"
)

// CascadeOf reads the cascade from a deleting object's finalizers.
func CascadeOf(finalizers []string) Cascade {
	switch {
	case slices.Contains(finalizers, metav1.FinalizerOrphanDependents):
		return CascadeOrphan
	case slices.Contains(finalizers, metav1.FinalizerDeleteDependents):
		return CascadeForeground
	}
	return CascadeBackground
}

// ExtensionVerdict is what a ClusterExtension's deletion is.
type ExtensionVerdict struct {
	Cascade Cascade
	// SkipReason is set when the uninstall deletes nothing.
	SkipReason string
	// Message says why, or what the uninstall does, for a person.
	Message string
}

// ClassifyExtension decides what a ClusterExtension's deletion is. OLM v1
// never deletes an extension itself (an upgrade changes it in place), so
// every deletion is an uninstall, except one with --cascade=orphan, whose
// dependents all stay: csv-cleaner deletes nothing of it either.
func ClassifyExtension(finalizers []string) ExtensionVerdict {
	switch c := CascadeOf(finalizers); c {
	case CascadeOrphan:
		return ExtensionVerdict{Cascade: c, SkipReason: cleanupv1alpha1.ReasonOrphanCascade,
			Message: "the ClusterExtension is deleted with --cascade=orphan: the garbage collector keeps every object it applied, and csv-cleaner deletes nothing"}
	case CascadeForeground:
		return ExtensionVerdict{Cascade: c,
			Message: "the ClusterExtension is deleted with --cascade=foreground: the garbage collector is deleting its CRDs, with every instance, and its operator now, whatever csv-cleaner does; csv-cleaner deletes the instances it still can, through the operator while it runs, and holds the ClusterExtension until they are gone, operandTimeout and onTimeout applying to those that wait on finalizers"}
	}
	return ExtensionVerdict{Cascade: CascadeBackground, Message: "ClusterExtension is being uninstalled"}
}

// ExtensionCRDFate decides what becomes of a CRD the extension owns: left
// to the garbage collector with crds: Delete and no instance left (as a
// CSV's CRDFate), else detached so that it stays. A CRD already being
// deleted goes once its instances are gone (docs/clusterextensions.md).
func ExtensionCRDFate(s decide.Settings, scope decide.CRDScope, instancesLeft bool) decide.Item {
	it := decide.Item{Action: decide.ActionKeep, Kind: decide.CRDKind, Name: scope.Name}
	switch {
	case scope.CRD != nil && !scope.CRD.DeletionTimestamp.IsZero():
		it.Action, it.Reason = decide.ActionDelete, decide.DeleteTerminating
		it.Message = "the garbage collector is deleting it (--cascade=foreground), and with it every instance: it goes once they are gone"
	case s.CRDs != cleanupv1alpha1.Delete:
		it.Reason = cleanupv1alpha1.KeepPolicyOrphan
	case instancesLeft:
		it.Reason = cleanupv1alpha1.KeepHasInstances
	default:
		it.Action, it.Reason = decide.ActionDelete, decide.DeleteGarbageCollected
	}
	return it
}

// Detach is the edit that keeps an object after its extension is gone.
type Detach struct {
	// OwnerReferences are the object's, without those to the extension or its ClusterObjectSets.
	OwnerReferences []metav1.OwnerReference
	// DropLabels are the owner labels that name the extension.
	DropLabels []string
}

// DetachFromExtension is the edit that takes obj out of the extension's
// garbage collection and ownership (operator-controller#775's orphaning),
// and whether one is needed. Other owners and labels stay as they are.
func DetachFromExtension(obj metav1.Object, ext Extension, sets map[types.UID]bool) (Detach, bool) {
	var d Detach
	refs := obj.GetOwnerReferences()
	for _, ref := range refs {
		if ref.UID == ext.UID || sets[ref.UID] {
			continue
		}
		d.OwnerReferences = append(d.OwnerReferences, ref)
	}
	if labelsName(obj, ext) {
		d.DropLabels = []string{ExtensionOwnerKindLabel, ExtensionOwnerNameLabel}
	}
	return d, len(d.OwnerReferences) != len(refs) || len(d.DropLabels) > 0
}

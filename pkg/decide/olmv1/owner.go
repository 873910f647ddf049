package olmv1

import (
	"fmt"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// The labels operator-controller puts on everything it applies for a
// ClusterExtension (its internal/operator-controller/labels package, which
// is not importable): under the Helm applier on the objects, under the
// Boxcutter applier on the ClusterObjectSets and their objects.
const (
	ExtensionOwnerKindLabel = "olm.operatorframework.io/owner-kind"
	ExtensionOwnerNameLabel = "olm.operatorframework.io/owner-name"
)

// ClusterObjectSetKind is the kind of the Boxcutter applier's revisions.
const ClusterObjectSetKind = "ClusterObjectSet"

// Extension names the ClusterExtension whose uninstall is decided.
type Extension struct {
	Name string
	UID  types.UID
}

// ExtensionOf is the decisions' view of a ClusterExtension.
func ExtensionOf(ext *ocv1.ClusterExtension) Extension {
	return Extension{Name: ext.Name, UID: ext.UID}
}

// Ownership is how an object belongs to an extension.
type Ownership int

const (
	// NotOwned: the object's controller is not the extension (nor one of its ClusterObjectSets).
	NotOwned Ownership = iota
	// OwnedDirectly: the Helm applier's chain, a controller ownerReference to the extension.
	OwnedDirectly
	// OwnedThroughSet: the Boxcutter applier's chain, a controller ownerReference
	// to a ClusterObjectSet whose controller is the extension.
	OwnedThroughSet
)

// controllerRef is the object's controller ownerReference, if any.
func controllerRef(obj metav1.Object) *metav1.OwnerReference {
	return metav1.GetControllerOfNoCopy(obj)
}

// isExtensionRef reports whether ref names the extension, by UID, kind and group.
func isExtensionRef(ref *metav1.OwnerReference, ext Extension) bool {
	return ref != nil && ref.UID == ext.UID && ref.Kind == ocv1.ClusterExtensionKind && groupOfAPIVersion(ref.APIVersion) == ocv1.GroupVersion.Group
}

func groupOfAPIVersion(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return ""
	}
	return gv.Group
}

// labelsName reports whether both owner labels of obj name the extension.
func labelsName(obj metav1.Object, ext Extension) bool {
	l := obj.GetLabels()
	return l[ExtensionOwnerKindLabel] == ocv1.ClusterExtensionKind && l[ExtensionOwnerNameLabel] == ext.Name
}

// ControlledSets returns the UIDs of the ClusterObjectSets whose controller
// is the extension, and a problem for each set the garbage collector would
// delete with the extension but whose owner labels name another owner.
func ControlledSets(ext Extension, sets []metav1.Object) (map[types.UID]bool, []decide.Problem) {
	owned := map[types.UID]bool{}
	var problems []decide.Problem
	for _, set := range sets {
		if !isExtensionRef(controllerRef(set), ext) {
			continue
		}
		if !labelsName(set, ext) {
			problems = append(problems, mismatch(ClusterObjectSetKind, set, ext))
			continue
		}
		owned[set.GetUID()] = true
	}
	return owned, problems
}

// OwnershipOf decides whether obj belongs to the extension: its controller
// ownerReference is the extension or one of its ClusterObjectSets (sets),
// and both owner labels name the extension. Labels naming another owner
// are a problem (OwnershipMismatch); labels without the ownerReference
// (helm.sh/resource-policy: keep) are not ownership.
func OwnershipOf(obj metav1.Object, kind string, ext Extension, sets map[types.UID]bool) (Ownership, *decide.Problem) {
	ref := controllerRef(obj)
	var how Ownership
	switch {
	case isExtensionRef(ref, ext):
		how = OwnedDirectly
	case ref != nil && ref.Kind == ClusterObjectSetKind && groupOfAPIVersion(ref.APIVersion) == ocv1.GroupVersion.Group && sets[ref.UID]:
		how = OwnedThroughSet
	default:
		return NotOwned, nil
	}
	if !labelsName(obj, ext) {
		p := mismatch(kind, obj, ext)
		return NotOwned, &p
	}
	return how, nil
}

func mismatch(kind string, obj metav1.Object, ext Extension) decide.Problem {
	l := obj.GetLabels()
	return decide.Problem{Reason: cleanupv1alpha1.BlockedOwnershipMismatch, Object: kind + " " + obj.GetName(),
		Message: fmt.Sprintf("%s %s is controlled by ClusterExtension %s (directly or through a ClusterObjectSet), so the garbage collector deletes it with the extension, but its labels %s=%q and %s=%q do not name that extension; fix the labels, or remove the ownerReference to keep it, then the uninstall goes on",
			kind, obj.GetName(), ext.Name, ExtensionOwnerKindLabel, l[ExtensionOwnerKindLabel], ExtensionOwnerNameLabel, l[ExtensionOwnerNameLabel])}
}

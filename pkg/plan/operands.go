package plan

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// OperandInput is what PlanOperands looks at for one CRD in scope.
type OperandInput struct {
	Scope CRDScope
	// Targets are the uninstalled CSV's target namespaces.
	Targets NamespaceSet
	// DeletionTime is the CSV's deletionTimestamp.
	DeletionTime metav1.Time
	// Orphan, when set, keeps every instance for that reason (GateOperands).
	Orphan string
	// Timeout says whether operandTimeout has passed and what onTimeout does then.
	Timeout Timeout
	// Items are the CRD's instances, metadata only.
	Items []metav1.PartialObjectMetadata
}

// OperandPlan says what happens to each instance of one CRD.
type OperandPlan struct {
	// Items are every instance with its action and reason, in the order given.
	Items []Item
	// Delete are live instances to delete, each with its UID as a precondition.
	Delete []metav1.PartialObjectMetadata
	// Terminating are instances already being deleted, waiting on finalizers
	// (or, past the timeout with RemoveFinalizers, whose finalizers go).
	Terminating []metav1.PartialObjectMetadata
	// Kept counts the instances left in place, by reason.
	Kept map[string]int
	// KeptRefs names them, with their reasons.
	KeptRefs []cleanupv1alpha1.ObjectRef
}

// PlanOperands decides, for each instance of a CRD in scope, what happens
// to it (DecideOperand), and sorts the instances by what the uninstall does.
func PlanOperands(in OperandInput) OperandPlan {
	p := OperandPlan{Kept: map[string]int{}, Items: make([]Item, 0, len(in.Items))}
	for i := range in.Items {
		obj := &in.Items[i]
		it := DecideOperand(in, obj)
		p.Items = append(p.Items, it)
		switch {
		case it.Action == ActionKeep:
			p.Kept[it.Reason]++
			p.KeptRefs = append(p.KeptRefs, cleanupv1alpha1.ObjectRef{Kind: it.Kind, Namespace: obj.Namespace, Name: obj.Name, Reason: it.Reason})
		case obj.DeletionTimestamp != nil:
			p.Terminating = append(p.Terminating, *obj)
		default:
			p.Delete = append(p.Delete, *obj)
		}
	}
	return p
}

// DecideOperand decides what happens to one instance of a CRD in scope.
// The order is the precedence: operands kept whole (opted out, operands:
// Orphan), then the CRD's own keep reason (unproven, shared cluster-scoped),
// then the instance's (outside the targets, another owner's target, created
// after the deletion); what is left is deleted, or, already terminating,
// waited for, kept or stripped of its finalizers past operandTimeout as
// onTimeout says.
func DecideOperand(in OperandInput, obj *metav1.PartialObjectMetadata) Item {
	it := Item{Action: ActionKeep, Kind: in.Scope.Kind, Namespace: obj.Namespace, Name: obj.Name}
	switch {
	case in.Orphan != "":
		it.Reason = in.Orphan
	case in.Scope.KeepReason != "":
		it.Reason = in.Scope.KeepReason
	default:
		it.Reason = keepReason(in, obj)
	}
	if it.Reason != "" {
		return it
	}
	it.Action, it.Reason = ActionDelete, DeleteOwnedOperand
	if obj.DeletionTimestamp != nil {
		it.Reason = DeleteTerminating
		if in.Timeout.Passed {
			switch in.Timeout.OnTimeout {
			case cleanupv1alpha1.TimeoutOrphan:
				it.Action, it.Reason = ActionKeep, cleanupv1alpha1.KeepTimedOut
			case cleanupv1alpha1.TimeoutRemoveFinalizers:
				it.Reason = DeleteRemoveFinalizers
			}
		}
	}
	return it
}

// keepReason says why one instance is kept: it is outside the CSV's target
// namespaces, in a namespace that another live CSV owning the same CRD
// targets, or not created before the CSV's deletion (CreatedAfter).
func keepReason(in OperandInput, item *metav1.PartialObjectMetadata) string {
	if in.Scope.Namespaced {
		if !in.Targets.Has(item.Namespace) {
			return cleanupv1alpha1.KeepOutsideTargets
		}
		for _, o := range in.Scope.Others {
			if o.Targets.Has(item.Namespace) {
				return cleanupv1alpha1.KeepSharedWithCSV
			}
		}
	}
	if CreatedAfter(item.CreationTimestamp, in.DeletionTime) {
		return cleanupv1alpha1.KeepCreatedAfterDeletion
	}
	return ""
}

// CreatedAfter reports whether an object may have been created after a
// deletion began. Both timestamps have whole seconds, so an object created
// in the same second as the deletion may be either side of it: only one
// created in an earlier second is proven older. (No stronger signal is
// sound: the API server promises resourceVersions comparable only within
// one resource, apimachinery pkg/util/resourceversion, and an operand's and
// a CSV's are two.)
func CreatedAfter(created, deletion metav1.Time) bool {
	return !created.Truncate(time.Second).Before(deletion.Truncate(time.Second))
}

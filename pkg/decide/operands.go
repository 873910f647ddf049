package decide

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// OperandInput is what PlanOperands looks at for one CRD in scope.
type OperandInput struct {
	Scope CRDScope
	// Targets are the uninstalled CSV's target namespaces.
	Targets NamespaceSet
	// DeletionTime is the CSV's deletionTimestamp.
	DeletionTime metav1.Time
	// AtDeletion says, for the instances created in DeletionTime's own
	// second, whether each existed at the deletion's revision (an Exact LIST
	// there): true if it was listed with its UID, false if not. An instance
	// of that second that it lacks is of unknown age (no revision was seen,
	// or the API server could no longer answer) and is kept
	// (CreatedInDeletionSecond).
	AtDeletion map[types.UID]bool
	// Orphan, when set, keeps every instance for that reason (GateOperands).
	Orphan string
	// Timeout says whether operandTimeout has passed and what onTimeout does then.
	Timeout Timeout
	// Backed, when not nil, are the namespaces whose operands the
	// uninstall's verified backup holds (BackedNamespaces): an operand
	// outside them, in a target namespace added since, is kept.
	Backed NamespaceSet
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

// DecideOperand decides what happens to one instance of a CRD in scope, in
// the precedence docs/plan.md lists.
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
// targets, created after the CSV's deletion began (a later second, or
// absent at the deletion's revision), or created in the deletion's second
// when the revision could not tell.
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
		if in.Backed != nil && !in.Backed.Has(item.Namespace) {
			return cleanupv1alpha1.KeepNotInBackup
		}
	}
	switch CreationOrder(item.CreationTimestamp, in.DeletionTime) {
	case CreatedLater:
		return cleanupv1alpha1.KeepCreatedAfterDeletion
	case CreatedSameSecond:
		existed, known := in.AtDeletion[item.UID]
		switch {
		case !known:
			return cleanupv1alpha1.KeepCreatedInDeletionSecond
		case !existed:
			return cleanupv1alpha1.KeepCreatedAfterDeletion
		}
	}
	return ""
}

// BackedNamespaces are the namespaces whose operands a verified backup
// holds, as its record names them (EveryNamespace for every namespace); nil
// without a verified backup, or when it holds no namespaced operand (there
// is none to keep then).
func BackedNamespaces(verified bool, namespaces []string) NamespaceSet {
	switch {
	case !verified || len(namespaces) == 0:
		return nil
	case slices.Contains(namespaces, EveryNamespace):
		return AllNamespaces()
	}
	return NewNamespaceSet(namespaces)
}

// Order is when an object was created against a deletion, as far as
// timestamps tell.
type Order int

const (
	// CreatedEarlier: in an earlier second than the deletion, so before it.
	CreatedEarlier Order = iota
	// CreatedSameSecond: in the deletion's own second, either side of it.
	CreatedSameSecond
	// CreatedLater: in a later second, so after the deletion began.
	CreatedLater
)

// CreationOrder compares an object's creationTimestamp with a deletion's
// deletionTimestamp. Both have whole seconds, so an object created in the
// deletion's own second may be either side of it: the timestamps alone
// cannot tell, and the cluster as it was at the deletion's revision
// (OperandInput.AtDeletion) decides.
func CreationOrder(created, deletion metav1.Time) Order {
	c, d := created.Truncate(time.Second), deletion.Truncate(time.Second)
	switch {
	case c.Before(d):
		return CreatedEarlier
	case c.Equal(d):
		return CreatedSameSecond
	}
	return CreatedLater
}

// InDeletionSecond returns the objects of items created in the deletion's
// own second: those whose age only the deletion's revision can tell.
func InDeletionSecond(items []metav1.PartialObjectMetadata, deletion metav1.Time) []*metav1.PartialObjectMetadata {
	var out []*metav1.PartialObjectMetadata
	for i := range items {
		if CreationOrder(items[i].CreationTimestamp, deletion) == CreatedSameSecond {
			out = append(out, &items[i])
		}
	}
	return out
}

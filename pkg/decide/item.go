package decide

// Actions of a decided item.
const (
	ActionDelete = "Delete"
	ActionKeep   = "Keep"
	// ActionUpdate: the uninstall changes the object (a CRD's conversion) and keeps it.
	ActionUpdate = "Update"
)

// Reasons of the Delete items, beside the Keep* reasons of api/v1alpha1.
const (
	// DeleteOwnedOperand: an instance of an owned CRD in the target namespaces, created before the uninstall.
	DeleteOwnedOperand = "OwnedOperand"
	// DeleteTerminating: an operand already being deleted; the uninstall waits for its finalizers.
	DeleteTerminating = "AlreadyTerminating"
	// DeleteRemoveFinalizers: an operand still being deleted past operandTimeout with onTimeout: RemoveFinalizers; csv-cleaner removes its finalizers.
	DeleteRemoveFinalizers = "RemoveFinalizers"
	// DeleteOwnerLabels: a cluster object with the CSV's three OLM owner labels.
	DeleteOwnerLabels = "OwnerLabels"
	// DeleteInstalledAlongside: an owned CRD OLM installed with this CSV, owned by no other CSV, deleted once its instances are gone.
	DeleteInstalledAlongside = "InstalledAlongside"
	// DeleteGarbageCollected: a CRD a ClusterExtension owns, with no instance left, that the garbage collector deletes once the extension is gone.
	DeleteGarbageCollected = "GarbageCollected"
	// UpdateConversionNone: an owned CRD whose conversion webhook fails while the operator is unavailable; its spec.conversion is set to None before its instances are read.
	UpdateConversionNone = "ConversionToNone"
)

// Item is one object and what an uninstall does with it, and why: what
// `csv-cleaner plan` prints and what the uninstall carries out.
type Item struct {
	Action    string `json:"action"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Reason    string `json:"reason"`
	// Message says more, for a person, where the reason alone does not.
	Message string `json:"message,omitempty"`
}

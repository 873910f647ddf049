package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UndoPhase is where an undo stands.
// +kubebuilder:validation:Enum=Blocked;WaitingForReinstall;InProgress;Completed;PartiallyFailed;Failed
type UndoPhase string

const (
	// UndoBlocked: the undo cannot go on now, and goes on by itself once it
	// can: the operator runs (reason OperatorRunning: nothing is restored
	// beside it), Velero's storage location is not Available
	// (StorageUnavailable), or its last Restore failed (RestoreFailed: the
	// next attempt is made once the location is Available). The Complete
	// condition says why and what to do.
	UndoBlocked UndoPhase = "Blocked"
	// UndoWaitingForReinstall is what earlier csv-cleaners wrote while they
	// waited for the operator to be installed again; csv-cleaner no longer does: an
	// undo runs before the reinstall (docs/backup.md, "Undo, then reinstall").
	UndoWaitingForReinstall UndoPhase = "WaitingForReinstall"
	// UndoInProgress: Velero's Restore (status.restore) is under way.
	UndoInProgress UndoPhase = "InProgress"
	// UndoCompleted: everything the undo restores is back, its owners linked again.
	UndoCompleted UndoPhase = "Completed"
	// UndoPartiallyFailed: the undo ended with something not back as it
	// was, or not known to be (status.objects says which and why).
	UndoPartiallyFailed UndoPhase = "PartiallyFailed"
	// UndoFailed: the undo cannot be made (no verified Backup of the
	// uninstall, a selection that names nothing it destroyed); nothing was
	// restored.
	UndoFailed UndoPhase = "Failed"
)

// Ended reports whether an undo in phase p is over: it is not looked at again.
func (p UndoPhase) Ended() bool {
	return p == UndoCompleted || p == UndoPartiallyFailed || p == UndoFailed
}

// Condition types and reasons of an Undo.
const (
	// UndoConditionComplete is True once everything the undo restores is
	// back; False while it waits or restores, or when it ended otherwise.
	UndoConditionComplete = "Complete"

	UndoReasonWaitingForReinstall = "WaitingForReinstall"
	// UndoReasonOperatorRunning: the operator that serves the uninstall's
	// CRDs runs; nothing is restored beside it.
	UndoReasonOperatorRunning = "OperatorRunning"
	// UndoReasonStorageUnavailable: Velero's storage location is not
	// Available; no Restore is made until it is.
	UndoReasonStorageUnavailable = "StorageUnavailable"
	// UndoReasonRestoreFailed: the undo's Restore failed; it makes the next
	// attempt by itself (status.attempt) once the location is Available.
	UndoReasonRestoreFailed    = "RestoreFailed"
	UndoReasonRestoring        = "Restoring"
	UndoReasonCompleted        = "Completed"
	UndoReasonNotBack          = "NotBack"
	UndoReasonNoBackup         = "NoBackup"
	UndoReasonInvalidSelection = "InvalidSelection"
	// UndoReasonRetrying: a step failed (the API server or Velero erred);
	// it is tried again with a growing delay.
	UndoReasonRetrying = "Retrying"
)

// UndoTarget names the uninstall an undo undoes: the owner that was uninstalled.
// +kubebuilder:validation:XValidation:rule="self.kind == 'ClusterExtension' ? !has(self.__namespace__) : has(self.__namespace__)",message="a ClusterServiceVersion is named by namespace and name, a ClusterExtension by its name alone"
type UndoTarget struct {
	// kind is what was uninstalled: ClusterServiceVersion (OLM v0) or
	// ClusterExtension (OLM v1).
	// +kubebuilder:validation:Enum=ClusterServiceVersion;ClusterExtension
	Kind string `json:"kind"`
	// namespace is the CSV's namespace (not for a ClusterExtension).
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// name is the CSV's or the ClusterExtension's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// UndoSpec is what an undo restores. It cannot change: create another Undo.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="an Undo's spec cannot change: create another Undo"
type UndoSpec struct {
	// uninstall names the uninstall to undo, by the owner that was uninstalled.
	Uninstall UndoTarget `json:"uninstall"`

	// only restores these custom resources the uninstall deleted, each as
	// KIND/NAMESPACE/NAME (KIND/NAME when cluster-scoped; KIND as Kind,
	// Kind.group or plural.group), with what they owned; empty, all of them.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=512
	// +listType=set
	// +optional
	Only []string `json:"only,omitempty"`

	// selector restores only the custom resources the uninstall deleted
	// whose labels matched it, with what they owned.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// withoutOperator is ignored: an undo always runs without the operator,
	// restoring the CRDs the uninstall deleted too; it is kept so that Undos
	// written for earlier csv-cleaners are still valid.
	// +optional
	WithoutOperator bool `json:"withoutOperator,omitempty"`

	// besideOperator undoes while the operator that serves the uninstall's
	// CRDs runs. The operator then sees each restored custom resource
	// before what it owned is linked to it again: one that finds its
	// children by their ownerReferences makes new ones beside the restored
	// ones (docs/backup.md, "Undo, then reinstall"). Without it, the undo
	// waits until the operator is stopped (Blocked, OperatorRunning).
	// +optional
	BesideOperator bool `json:"besideOperator,omitempty"`

	// veleroNamespace is Velero's namespace, where the uninstall's Backups
	// are looked for when its record is gone.
	// +kubebuilder:default=velero
	// +kubebuilder:validation:MaxLength=63
	// +optional
	VeleroNamespace string `json:"veleroNamespace,omitempty"`
}

// UndoObject is one object the undo restores that is not back as it was,
// or whose owners it left out.
type UndoObject struct {
	// kind is the object's Kind, with its group when it has one (Kind.group).
	Kind string `json:"kind"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// state is present, restored, missing or unread.
	State string `json:"state"`
	// problem says what is wrong with it.
	// +optional
	Problem string `json:"problem,omitempty"`
	// ownersLeftOut are the original owners the undo did not link it to again, and why.
	// +optional
	OwnersLeftOut []string `json:"ownersLeftOut,omitempty"`
}

// MaxUndoObjects is how many objects status.objects lists at most.
const MaxUndoObjects = 50

// UndoStatus is where an undo stands.
type UndoStatus struct {
	// observedGeneration is the generation this status is about.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase is where the undo stands.
	// +optional
	Phase UndoPhase `json:"phase,omitempty"`
	// reinstall is what earlier csv-cleaners wrote while they waited for
	// the operator to be installed again; csv-cleaner no longer writes it.
	// +optional
	Reinstall string `json:"reinstall,omitempty"`
	// backup is the verified Velero Backup restored from (namespace/name).
	// +optional
	Backup string `json:"backup,omitempty"`
	// restore is the Velero Restore the undo made or follows, in the Backup's namespace.
	// +optional
	Restore string `json:"restore,omitempty"`
	// restorePhase is the Restore's phase as last read.
	// +optional
	RestorePhase string `json:"restorePhase,omitempty"`
	// attempt numbers the Restore of status.restore: 2 is the one made
	// after the first failed.
	// +optional
	Attempt int32 `json:"attempt,omitempty"`
	// itemsRestored and totalItems are the Restore's progress as last read.
	// +optional
	ItemsRestored int64 `json:"itemsRestored,omitempty"`
	// +optional
	TotalItems int64 `json:"totalItems,omitempty"`
	// binding counts the claims the Restore made, once it ended, that are
	// still being made from their snapshots (Pending, their VolumeSnapshot
	// as their data source); the undo waits for them.
	// +optional
	Binding int32 `json:"binding,omitempty"`
	// objects counts what the undo restores; restored, present, missing and
	// unread, where each of them was left; ownersLinked, the objects linked
	// to their owners again.
	// +optional
	Objects int32 `json:"objectCount,omitempty"`
	// +optional
	Restored int32 `json:"restored,omitempty"`
	// +optional
	Present int32 `json:"present,omitempty"`
	// +optional
	Missing int32 `json:"missing,omitempty"`
	// +optional
	Unread int32 `json:"unread,omitempty"`
	// +optional
	OwnersLinked int32 `json:"ownersLinked,omitempty"`
	// notBack lists the objects not back as they were, or whose owners were
	// left out (at most 50; the counts are complete).
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	// +optional
	NotBack []UndoObject `json:"notBack,omitempty"`
	// rows is the ConfigMap (namespace/name, in Velero's namespace, owned
	// by the Undo) that keeps what the undo came to, every object's row,
	// once it ended: what `csv-cleaner undo` prints.
	// +optional
	Rows string `json:"rows,omitempty"`
	// startTime is when the undo began; completionTime, when it ended.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// conditions: Complete.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Undo asks csv-cleaner to undo an uninstall it made under a CleanupPolicy
// with backup: to restore, from the uninstall's verified Velero Backup,
// what it destroyed and is missing now, while the operator does not run
// (before it is installed again), and to link the restored objects to
// their owners again. It is what `csv-cleaner undo` creates and follows;
// deleting it undoes nothing.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,path=undos,singular=undo
// +kubebuilder:printcolumn:name="KIND",type=string,JSONPath=`.spec.uninstall.kind`
// +kubebuilder:printcolumn:name="NAMESPACE",type=string,JSONPath=`.spec.uninstall.namespace`
// +kubebuilder:printcolumn:name="NAME",type=string,JSONPath=`.spec.uninstall.name`
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="RESTORED",type=integer,JSONPath=`.status.restored`
// +kubebuilder:printcolumn:name="MISSING",type=integer,JSONPath=`.status.missing`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Undo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   UndoSpec   `json:"spec"`
	Status UndoStatus `json:"status,omitempty"`
}

// UndoList is a list of Undo.
//
// +kubebuilder:object:root=true
type UndoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Undo `json:"items"`
}

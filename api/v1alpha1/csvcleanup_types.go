package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Phase is where an uninstall stands.
// +kubebuilder:validation:Enum=Deleting;Blocked;Releasing;Completed;Skipped
type Phase string

const (
	// PhaseDeleting: the uninstall is under way.
	PhaseDeleting Phase = "Deleting"
	// PhaseBlocked: the uninstall waits on something it lists.
	PhaseBlocked Phase = "Blocked"
	// PhaseReleasing: everything the policy asked for is done; csv-cleaner is
	// removing its finalizer from the CSV. Completed follows once it has.
	PhaseReleasing Phase = "Releasing"
	// PhaseCompleted: everything the policy asked for is done and the CSV was released.
	PhaseCompleted Phase = "Completed"
	// PhaseSkipped: the deletion was not an uninstall (see reason); nothing was deleted.
	PhaseSkipped Phase = "Skipped"
)

// Reasons for a Skipped uninstall.
const (
	ReasonUpgrade   = "Upgrade"
	ReasonReinstall = "Reinstall"
	ReasonCopied    = "Copied"
	// ReasonUnmanaged: no CleanupPolicy selects the CSV any more.
	ReasonUnmanaged = "Unmanaged"
	// ReasonOrphanCascade: a ClusterExtension deleted with --cascade=orphan, whose dependents all stay.
	ReasonOrphanCascade = "OrphanCascade"
)

// How a deletion's revision was found, in status.deletionRevisionFrom.
const (
	// RevisionFromWatch: csv-cleaner's watch saw the deletion begin.
	RevisionFromWatch = "Watch"
	// RevisionFromSearch: found after the fact by Exact LISTs of the object at chosen revisions.
	RevisionFromSearch = "Search"
	// RevisionNotFound: searched for, but the revisions before the deletion were compacted.
	RevisionNotFound = "NotFound"
)

// Condition types of a CSVCleanup.
const (
	ConditionDeleting = "Deleting"
	ConditionBlocked  = "Blocked"
	ConditionComplete = "Complete"
	// ConditionRetrying is True while the uninstall's attempts keep failing
	// (the API server errs, or its replies are lost): how many, the last
	// error and when the next attempt comes. It turns False on success.
	ConditionRetrying = "Retrying"
)

// CSVCleanupSpec names the ClusterServiceVersion a record reports on.
type CSVCleanupSpec struct {
	// csvName is the name of the ClusterServiceVersion.
	CSVName string `json:"csvName"`
	// csvNamespace is the namespace of the ClusterServiceVersion (the record's own namespace).
	CSVNamespace string `json:"csvNamespace"`
}

// KindCount counts the objects of one kind an uninstall dealt with.
type KindCount struct {
	// kind is Kind.group of the objects (for example Widget.example.com, ClusterRole.rbac.authorization.k8s.io).
	Kind string `json:"kind"`
	// found is how many objects the uninstall set out to delete.
	Found int32 `json:"found"`
	// deleted is how many of them are gone.
	Deleted int32 `json:"deleted"`
	// remaining is how many of them still exist.
	Remaining int32 `json:"remaining"`
	// kept counts the objects left in place on purpose, by reason.
	// +optional
	Kept []KeptCount `json:"kept,omitempty"`
}

// KeptCount counts objects kept for one reason.
type KeptCount struct {
	Reason string `json:"reason"`
	Count  int32  `json:"count"`
}

// ObjectRef names one object that blocks an uninstall.
type ObjectRef struct {
	// kind is Kind.group of the object.
	Kind string `json:"kind"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// finalizers the object still carries.
	// +optional
	Finalizers []string `json:"finalizers,omitempty"`
	// reason says why it blocks.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// MaxBlocking is the most objects a record lists as blocking.
const MaxBlocking = 20

// MaxKept is the most kept objects a record names.
const MaxKept = 30

// CSVCleanupStatus is the progress of one uninstall of a ClusterServiceVersion.
type CSVCleanupStatus struct {
	// csvUID is the UID of the CSV this uninstall is for. A CSV of the same name with another UID starts the record afresh.
	// +optional
	CSVUID types.UID `json:"csvUID,omitempty"`

	UninstallStatus `json:",inline"`
}

// UninstallStatus is the progress of one uninstall, of a CSV or a ClusterExtension.
type UninstallStatus struct {
	// phase is where the uninstall stands.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// reason says why a Skipped uninstall was skipped, or why a Blocked one waits.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says the same for a person.
	// +optional
	Message string `json:"message,omitempty"`
	// policy is the CleanupPolicy that was applied.
	// +optional
	Policy string `json:"policy,omitempty"`
	// uninstallMessage is what the operator's author asks of whoever
	// uninstalls it (a CSV's operator.openshift.io/uninstall-message
	// annotation, which the OpenShift console shows in its uninstall
	// dialog), as it read when the uninstall started.
	// +optional
	UninstallMessage string `json:"uninstallMessage,omitempty"`
	// startTime is when the uninstall was first seen.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// deletionRevision is the resourceVersion of the write that started the
	// deletion: the first version with a deletionTimestamp, whose previous
	// version had none. An operand created in the deletion's own second is
	// looked up as the cluster was at this revision to tell whether it
	// existed when the uninstall began. Empty when it is not known.
	// +optional
	DeletionRevision string `json:"deletionRevision,omitempty"`
	// deletionRevisionFrom says how deletionRevision was found: Watch
	// (csv-cleaner's watch saw the deletion begin), Search (found after the
	// fact, csv-cleaner having been down: Exact LISTs of the object at chosen
	// revisions), or NotFound (searched for, but the revisions before the
	// deletion were compacted). Empty while no operand of the deletion's
	// second needed it.
	// +optional
	// +kubebuilder:validation:Enum=Watch;Search;NotFound
	DeletionRevisionFrom string `json:"deletionRevisionFrom,omitempty"`
	// completionTime is when the CSV (or the ClusterExtension) was released.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// remaining is how many objects the uninstall still waits for, all kinds together.
	// +optional
	Remaining int32 `json:"remaining"`
	// counts per kind.
	// +optional
	Counts []KindCount `json:"counts,omitempty"`
	// blocking lists up to 20 objects that still block the uninstall.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	Blocking []ObjectRef `json:"blocking,omitempty"`
	// kept names up to 30 objects the uninstall leaves in place, with their
	// reasons, the most specific reasons first (CreatedInDeletionSecond,
	// CreatedAfterDeletion, SharedWithCSV, Unproven, SharedClusterScoped, then OutsideTargets and
	// the rest); counts has the number for every reason.
	// +kubebuilder:validation:MaxItems=30
	// +optional
	Kept []ObjectRef `json:"kept,omitempty"`
	// keptTotal is how many objects the uninstall leaves in place, all kinds and reasons together.
	// +optional
	KeptTotal int32 `json:"keptTotal,omitempty"`
	// backup is the backup that gates the uninstall's deletes, when the
	// policy asks for one.
	// +optional
	Backup *BackupStatus `json:"backup,omitempty"`
	// conditions: Deleting, Blocked and Complete.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// BackupStatus is the backup that gates an uninstall's deletes.
type BackupStatus struct {
	// tool is what made it: Velero.
	Tool string `json:"tool"`
	// namespace and name are the Backup's (velero.io/v1).
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// phase is the Backup's status.phase as csv-cleaner last read it.
	// +optional
	Phase string `json:"phase,omitempty"`
	// items is how many objects the Backup holds (its status.progress.itemsBackedUp).
	// +optional
	Items int32 `json:"items,omitempty"`
	// planned is how many objects the uninstall planned to delete when the
	// Backup was verified: each of them is in its resource list.
	// +optional
	Planned int32 `json:"planned,omitempty"`
	// verified is true once the Backup completed and its resource list holds
	// every object the uninstall will delete: nothing is deleted before.
	// +optional
	Verified bool `json:"verified,omitempty"`
	// verifiedTime is when it was verified.
	// +optional
	VerifiedTime *metav1.Time `json:"verifiedTime,omitempty"`
	// attempt counts the Backups made for this uninstall: a Backup that
	// failed or came out incomplete is made again under a new name (the
	// first Backup's name, then -2, -3, ...); the older ones stay.
	// +optional
	Attempt int32 `json:"attempt,omitempty"`
	// retryTime is when csv-cleaner makes the next Backup, while the last
	// one failed or came out incomplete; the message says what it waits for.
	// +optional
	RetryTime *metav1.Time `json:"retryTime,omitempty"`
	// lastFailure is what Velero said of the last Backup of this uninstall
	// that failed or came out incomplete (its errors' count, the first
	// ones, what to change), kept while the next attempt runs.
	// +optional
	LastFailure string `json:"lastFailure,omitempty"`
	// expected says how long Velero's Backup is expected to take: its
	// claims' CSI snapshots at the item-block workers its server runs, as
	// measured (docs/performance.md); empty when they are not known.
	// +optional
	Expected string `json:"expected,omitempty"`
	// namespaces are the namespaces whose operands the Backup holds ("*":
	// every namespace). An operand in another namespace, once the target
	// namespaces widened, is kept (NotInBackup).
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`
	// dependents is how many objects the garbage collector deletes with
	// what the uninstall deletes (their ownerReferences lead there) that the
	// Backup was verified to hold.
	// +optional
	Dependents int32 `json:"dependents,omitempty"`
	// volumes is how many PersistentVolumeClaims among them the Backup holds
	// a completed snapshot of.
	// +optional
	Volumes int32 `json:"volumes,omitempty"`
	// unread are the kinds of which csv-cleaner could not read every object
	// when it verified the Backup, none of whose unread objects anything the
	// uninstall destroys can own: it went on without them (docs/backup.md,
	// "A kind nobody can read"). At most MaxUnreadKinds are kept.
	// +optional
	// +listType=atomic
	Unread []UnreadKind `json:"unread,omitempty"`
}

// UnreadKind is a kind csv-cleaner could not read all of.
type UnreadKind struct {
	// resource is plural.group.
	Resource string `json:"resource"`
	// reason is StoreReadError (the API server cannot read them from
	// storage) or Unavailable (their API did not answer).
	Reason string `json:"reason"`
	// namespaces are where its objects could not be read ("" for the
	// cluster scope); none when they could be anywhere.
	// +optional
	// +listType=atomic
	Namespaces []string `json:"namespaces,omitempty"`
	// message says what was not read, and why the uninstall went on.
	Message string `json:"message"`
}

// MaxUnreadKinds bounds status.backup.unread.
const MaxUnreadKinds = 20

// BackupToolVelero is status.backup.tool of a Velero Backup.
const BackupToolVelero = "Velero"

// CSVCleanup records one uninstall of a ClusterServiceVersion. It is created the
// moment a managed CSV is seen being deleted and outlives the CSV as history.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=csvc
// +kubebuilder:printcolumn:name="CSV",type=string,JSONPath=`.spec.csvName`
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="REMAINING",type=integer,JSONPath=`.status.remaining`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type CSVCleanup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CSVCleanupSpec   `json:"spec,omitempty"`
	Status CSVCleanupStatus `json:"status,omitempty"`
}

// CSVCleanupList is a list of CSVCleanup.
//
// +kubebuilder:object:root=true
type CSVCleanupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CSVCleanup `json:"items"`
}

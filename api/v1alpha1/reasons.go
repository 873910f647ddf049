package v1alpha1

// The reasons a user sees in a CSVCleanup's status: status.reason of a
// Skipped or Blocked uninstall, the kept reasons of status.counts, and the
// reasons of status.blocking. Each is listed, with its meaning, in
// SkipReasons, KeptReasons and BlockedReasons, which the table of reasons
// of docs/policy.md is checked against (reasons_test.go).

// Reasons an object is kept, in status.counts[].kept.
const (
	// KeepOutsideTargets: the operand is in a namespace the operator did not target.
	KeepOutsideTargets = "OutsideTargets"
	// KeepSharedWithCSV: another live CSV that owns the CRD targets the operand's namespace.
	KeepSharedWithCSV = "SharedWithCSV"
	// KeepSharedClusterScoped: the operand is cluster-scoped and another live CSV owns its CRD.
	KeepSharedClusterScoped = "SharedClusterScoped"
	// KeepCreatedAfterDeletion: the operand was created after the CSV's
	// deletion began: in a later second, or in the same second but absent
	// from the cluster as it was at the deletion's revision.
	KeepCreatedAfterDeletion = "CreatedAfterDeletion"
	// KeepCreatedInDeletionSecond: the operand was created in the same second
	// as the deletion began, and the cluster as it was at the deletion's
	// revision could not be read (no revision was seen, or it was compacted):
	// it may be older or newer than the deletion, so it is kept.
	KeepCreatedInDeletionSecond = "CreatedInDeletionSecond"
	// KeepUnproven: the CRD lacks OLM's provenance annotation naming this CSV.
	KeepUnproven = "Unproven"
	// KeepOptedOut: the CSV carries console.openshift.io/disable-operand-delete: "true".
	KeepOptedOut = "OptedOut"
	// KeepPolicyOrphan: the policy says operands: Orphan.
	KeepPolicyOrphan = "PolicyOrphan"
	// KeepTimedOut: the operand still existed past operandTimeout with onTimeout: Orphan.
	KeepTimedOut = "TimedOut"
	// KeepSharedCRD: the CRD is not deleted because another live CSV owns it.
	KeepSharedCRD = "SharedCRD"
	// KeepHasInstances: the CRD is not deleted because instances of it remain.
	KeepHasInstances = "HasInstances"
	// NoteCRDNotFound: an owned CRD no longer exists, so it has no instances.
	NoteCRDNotFound = "CRDNotFound"
	// NoteNotListed: csv-cleaner may not list the instances, all kept, so they were not counted.
	NoteNotListed = "NotListed"
	// KeepNotInBackup: the operand is in a namespace the uninstall's verified
	// backup does not hold (the target namespaces widened after it was made).
	KeepNotInBackup = "NotInBackup"
)

// Reasons an uninstall is Blocked, in status.reason; the refusals also in
// status.blocking and, past operandTimeout with onTimeout: Orphan, as kept reasons.
const (
	// BlockedMalformedOwnedCRD: an owned CRD's name is not <plural>.<group>.
	BlockedMalformedOwnedCRD = "MalformedOwnedCRD"
	// BlockedCRDNotEstablished: an owned CRD is not established.
	BlockedCRDNotEstablished = "CRDNotEstablished"
	// BlockedTargetNamespacesUnknown: the target namespaces are missing, malformed or disagree.
	BlockedTargetNamespacesUnknown = "TargetNamespacesUnknown"
	// BlockedTooManyOperatorGroups: the CSV's namespace holds more than one OperatorGroup, as OLM's CSV reason says.
	BlockedTooManyOperatorGroups = "TooManyOperatorGroups"
	// BlockedOperatorGroupOutOfSync: the OperatorGroup's status.namespaces is not what its spec says: OLM has not caught up.
	BlockedOperatorGroupOutOfSync = "OperatorGroupOutOfSync"
	// BlockedForbidden: csv-cleaner lacks a right (RBAC).
	BlockedForbidden = "Forbidden"
	// BlockedAdmissionRefused: a webhook denied a request or could not be called, or an admission policy denied it.
	BlockedAdmissionRefused = "AdmissionRefused"
	// BlockedConversionFailed: a CRD's conversion webhook fails, so its instances cannot be read.
	BlockedConversionFailed = "ConversionFailed"
	// BlockedOperandsRemaining: operands held by finalizers remain past operandTimeout with onTimeout: Wait.
	BlockedOperandsRemaining = "OperandsRemaining"
	// BlockedOperatorUnavailable: operands with finalizers remain and the operator's Deployment is gone or not Available.
	BlockedOperatorUnavailable = "OperatorUnavailable"
	// BlockedOwnershipMismatch: an object has a ClusterExtension's controller ownerReference, so the garbage
	// collector deletes it with the extension, but its OLM owner labels name another owner.
	BlockedOwnershipMismatch = "OwnershipMismatch"
	// BlockedBackupUnavailable: the policy asks for a backup and Velero cannot
	// take it: its CRDs are absent, or its storage location is missing or not Available.
	BlockedBackupUnavailable = "BackupUnavailable"
	// BlockedBackupFailed: the uninstall's Backup ended Failed,
	// PartiallyFailed or FailedValidation, or is being deleted.
	BlockedBackupFailed = "BackupFailed"
	// BlockedBackupIncomplete: the uninstall's Backup completed, but its
	// resource list lacks an object the uninstall would delete, or the
	// uninstall could not tell all it would delete.
	BlockedBackupIncomplete = "BackupIncomplete"
	// BlockedVolumeNotSnapshottable: a PersistentVolumeClaim the uninstall
	// destroys has a volume Velero cannot snapshot (not CSI, no
	// VolumeSnapshotClass for its driver, snapshotVolumes: false) and the
	// policy requires volume data.
	BlockedVolumeNotSnapshottable = "VolumeNotSnapshottable"
	// BlockedClaimMarkedByRestore: a bound PersistentVolumeClaim the
	// uninstall destroys carries backup.velero.io/must-include-additional-items,
	// which Velero v1.18's Restore leaves on the claims it makes from CSI
	// snapshots: Velero's next Backup of it takes its PersistentVolume
	// whatever the Backup leaves out, and Velero dies of that at more than
	// one item-block worker (docs/backup.md).
	BlockedClaimMarkedByRestore = "ClaimMarkedByRestore"
	// BlockedDependentsUnreadable: the policy asks for a backup, and objects
	// that nobody can read (a conversion webhook that fails, a storage error,
	// an API that is down) may be owned by what the uninstall destroys: the
	// garbage collector deletes them once they read, and no backup can hold them.
	BlockedDependentsUnreadable = "DependentsUnreadable"
)

// Reason is a status reason with its one-line meaning.
type Reason struct {
	Name, Meaning string
}

// SkipReasons, KeptReasons and BlockedReasons are every reason of each kind, with its meaning.
var (
	SkipReasons = []Reason{
		{ReasonUpgrade, "a newer CSV replaces this one"},
		{ReasonReinstall, "a Subscription still tracks the CSV, so OLM re-creates it"},
		{ReasonCopied, "the CSV is one of OLM's copies in a target namespace"},
		{ReasonUnmanaged, "no CleanupPolicy selects the CSV any more"},
		{ReasonOrphanCascade, "a ClusterExtension deleted with --cascade=orphan: the garbage collector keeps everything it applied"},
	}
	KeptReasons = []Reason{
		{KeepOutsideTargets, "the operand is in a namespace the operator did not target"},
		{KeepSharedWithCSV, "another live CSV that owns the CRD targets the operand's namespace"},
		{KeepSharedClusterScoped, "the operand is cluster-scoped and another live CSV owns its CRD"},
		{KeepCreatedAfterDeletion, "the operand was created after the CSV's deletion began"},
		{KeepCreatedInDeletionSecond, "the operand was created in the deletion's own second and the cluster as it was at the deletion's revision could not be read: it may be older or newer"},
		{KeepUnproven, "the CRD lacks OLM's provenance annotation naming this CSV"},
		{KeepOptedOut, "the CSV opts out of operand deletion (console.openshift.io/disable-operand-delete)"},
		{KeepPolicyOrphan, "the policy says operands: Orphan"},
		{KeepTimedOut, "the operand was still there past operandTimeout, with onTimeout: Orphan"},
		{KeepSharedCRD, "the CRD stays: another live CSV owns it"},
		{KeepHasInstances, "the CRD stays: instances of it remain"},
		{NoteCRDNotFound, "the owned CRD no longer exists"},
		{NoteNotListed, "csv-cleaner may not list the kind, whose instances are all kept: not counted"},
		{KeepNotInBackup, "the operand is in a namespace the verified backup does not hold: the target namespaces widened after it was made"},
	}
	BlockedReasons = []Reason{
		{BlockedMalformedOwnedCRD, "an owned CRD's name is not <plural>.<group>"},
		{BlockedCRDNotEstablished, "an owned CRD is not established"},
		{BlockedTargetNamespacesUnknown, "the target namespaces are missing, malformed or disagree"},
		{BlockedTooManyOperatorGroups, "the CSV's namespace holds more than one OperatorGroup"},
		{BlockedOperatorGroupOutOfSync, "the OperatorGroup's status.namespaces is not what its spec says: OLM has not caught up"},
		{BlockedForbidden, "csv-cleaner lacks a right (RBAC)"},
		{BlockedAdmissionRefused, "a webhook or an admission policy refused a request"},
		{BlockedConversionFailed, "a CRD's conversion webhook fails"},
		{BlockedOperandsRemaining, "operands held by finalizers remain past operandTimeout (onTimeout: Wait)"},
		{BlockedOperatorUnavailable, "operands with finalizers remain and the operator is not running"},
		{BlockedOwnershipMismatch, "an object the garbage collector deletes with the ClusterExtension has owner labels that name another owner"},
		{BlockedBackupUnavailable, "the policy asks for a backup and Velero cannot take it: its CRDs are absent, or its storage location is missing or not Available"},
		{BlockedBackupFailed, "the uninstall's Velero Backup failed, partially failed, failed validation or is being deleted"},
		{BlockedBackupIncomplete, "the uninstall's Velero Backup completed without an object the uninstall would delete, or without a dependent the garbage collector would delete with it, or without a volume's snapshot; or the uninstall could not list all it would delete"},
		{BlockedVolumeNotSnapshottable, "a PersistentVolumeClaim the uninstall destroys has a volume Velero cannot snapshot, and the policy requires volume data"},
		{BlockedClaimMarkedByRestore, "a bound PersistentVolumeClaim the uninstall destroys carries the annotation backup.velero.io/must-include-additional-items that a Velero Restore left on it, with which Velero's Backup would take its PersistentVolume (and die of it at more than one item-block worker)"},
		{BlockedDependentsUnreadable, "the policy asks for a backup, and objects nobody can read (a conversion webhook that fails, a storage error, an API that is down) may be owned by what the uninstall destroys"},
	}
)

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Action says whether a kind of object is deleted or left in place by an uninstall.
// +kubebuilder:validation:Enum=Delete;Orphan
type Action string

const (
	// Delete removes the objects.
	Delete Action = "Delete"
	// Orphan leaves the objects in place.
	Orphan Action = "Orphan"
)

// TimeoutAction says what happens when operands are still present after operandTimeout.
// +kubebuilder:validation:Enum=Wait;RemoveFinalizers;Orphan
type TimeoutAction string

const (
	// TimeoutWait keeps waiting; the uninstall stays Blocked and lists what blocks it.
	TimeoutWait TimeoutAction = "Wait"
	// TimeoutRemoveFinalizers strips the finalizers of the remaining operands.
	TimeoutRemoveFinalizers TimeoutAction = "RemoveFinalizers"
	// TimeoutOrphan stops waiting, keeps the remaining operands and records that.
	TimeoutOrphan TimeoutAction = "Orphan"
)

// Provenance says whether a CRD must carry OLM's installed-alongside annotation
// naming the CSV before its instances are deleted.
// +kubebuilder:validation:Enum=Required;Waived
type Provenance string

const (
	// ProvenanceRequired deletes instances only of CRDs that OLM installed with the CSV.
	ProvenanceRequired Provenance = "Required"
	// ProvenanceWaived is for operators whose CRDs were applied by hand.
	ProvenanceWaived Provenance = "Waived"
)

// ConversionAction says what happens to the conversion webhook of an owned
// CRD that fails while its operator is unavailable.
// +kubebuilder:validation:Enum=Disable;Keep
type ConversionAction string

const (
	// ConversionDisable sets the CRD's spec.conversion to None, as OLM does once the CSV is gone.
	ConversionDisable ConversionAction = "Disable"
	// ConversionKeep leaves the conversion webhook; the uninstall is Blocked (ConversionFailed).
	ConversionKeep ConversionAction = "Keep"
)

// CleanupPolicySpec selects ClusterServiceVersions and ClusterExtensions and says what their uninstall removes.
// +kubebuilder:validation:XValidation:rule="!has(self.clusterExtensionSelector) || !(has(self.operands) && self.operands == 'Orphan' && has(self.crds) && self.crds == 'Delete')",message="operands: Orphan with crds: Delete cannot hold for a ClusterExtension: the garbage collector would delete its CRDs and with them every custom resource the policy keeps; set crds: Orphan, or operands: Delete"
type CleanupPolicySpec struct {
	// csvSelector selects CSVs by label. Empty selects all CSVs; absent
	// selects all CSVs too, unless clusterExtensionSelector is set (then no CSV).
	// +optional
	CSVSelector *metav1.LabelSelector `json:"csvSelector,omitempty"`

	// namespaceSelector selects CSVs by the labels of their namespace. Empty selects all namespaces.
	// It does not apply to ClusterExtensions, which are cluster-scoped.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// clusterExtensionSelector selects OLM v1 ClusterExtensions
	// (olm.operatorframework.io/v1) by label. Empty selects all
	// ClusterExtensions; absent selects none.
	// +optional
	ClusterExtensionSelector *metav1.LabelSelector `json:"clusterExtensionSelector,omitempty"`

	// operands says whether the custom resources of the CSV's owned CRDs are deleted.
	// +kubebuilder:default=Delete
	// +optional
	Operands Action `json:"operands,omitempty"`

	// clusterRBAC says whether the ClusterRoles and ClusterRoleBindings OLM made for the CSV are deleted.
	// +kubebuilder:default=Delete
	// +optional
	ClusterRBAC Action `json:"clusterRBAC,omitempty"`

	// webhooks says whether the webhook configurations OLM made for the CSV are deleted.
	// +kubebuilder:default=Delete
	// +optional
	Webhooks Action `json:"webhooks,omitempty"`

	// crds says whether the CSV's owned CRDs are deleted once they have no instances left.
	// +kubebuilder:default=Orphan
	// +optional
	CRDs Action `json:"crds,omitempty"`

	// operandTimeout is how long operands may take to go away before onTimeout applies.
	// +kubebuilder:default="10m"
	// +optional
	OperandTimeout *metav1.Duration `json:"operandTimeout,omitempty"`

	// onTimeout says what happens to operands still present after operandTimeout.
	// +kubebuilder:validation:Enum=Wait;RemoveFinalizers;Orphan
	// +kubebuilder:default=Wait
	// +optional
	OnTimeout TimeoutAction `json:"onTimeout,omitempty"`

	// crdProvenance says whether an owned CRD must carry OLM's
	// operatorframework.io/installed-alongside-<hash> annotation naming the CSV before its instances are deleted.
	// +kubebuilder:default=Required
	// +optional
	CRDProvenance Provenance `json:"crdProvenance,omitempty"`

	// conversionWebhooks says what happens when the conversion webhook of an
	// owned CRD that carries OLM's provenance for the CSV, and that no other
	// live CSV owns, fails while the operator is unavailable, so that its
	// instances cannot be listed: Disable sets the CRD's spec.conversion to
	// None, exactly as OLM does once the CSV is gone; Keep leaves it, and the
	// uninstall is Blocked (ConversionFailed).
	// +kubebuilder:default=Disable
	// +optional
	ConversionWebhooks ConversionAction `json:"conversionWebhooks,omitempty"`

	// priority decides between several policies that select one CSV: the highest wins, then the name that sorts first.
	// +optional
	Priority int32 `json:"priority,omitempty"`

	// backup makes every uninstall under the policy undoable: before its
	// first delete, a backup holding every object the uninstall will delete
	// must be complete and verified. Absent: no backup, nothing waits.
	// +optional
	Backup *BackupSpec `json:"backup,omitempty"`
}

// BackupSpec says how an uninstall backs up what it will delete before it deletes anything.
// +kubebuilder:validation:XValidation:rule="has(self.velero)",message="backup names its tool: velero"
type BackupSpec struct {
	// velero backs up with Velero (velero.io/v1 Backup): one Backup per
	// uninstall, whose resource list must hold every object the uninstall
	// will delete.
	// +optional
	Velero *VeleroBackup `json:"velero,omitempty"`
}

// VeleroBackup is the Velero Backup an uninstall makes.
type VeleroBackup struct {
	// namespace is Velero's namespace, where its server watches for Backups
	// and where csv-cleaner creates them.
	// +kubebuilder:default=velero
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// storageLocation is the BackupStorageLocation the Backup is stored in;
	// absent: Velero's default location.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	StorageLocation string `json:"storageLocation,omitempty"`

	// ttl is how long Velero keeps the Backup; absent: Velero's default (30 days).
	// +optional
	TTL *metav1.Duration `json:"ttl,omitempty"`

	// snapshotVolumes asks Velero to snapshot the persistent volumes of what it
	// backs up, so that a restore brings back the data in the operands'
	// volumes too; absent: Velero's default (true).
	// +optional
	SnapshotVolumes *bool `json:"snapshotVolumes,omitempty"`

	// volumeData says what a PersistentVolumeClaim the uninstall destroys
	// needs in the backup: Required (the default), a completed CSI snapshot
	// of its volume, and a claim whose volume cannot be snapshotted blocks
	// the uninstall (VolumeNotSnapshottable); ObjectsOnly, its object alone
	// is acceptable when its volume cannot be snapshotted.
	// +kubebuilder:validation:Enum=Required;ObjectsOnly
	// +kubebuilder:default=Required
	// +optional
	VolumeData VolumeData `json:"volumeData,omitempty"`
}

// VolumeData says whether a backup must hold the data of the volumes an uninstall destroys.
type VolumeData string

// What a backup holds of a destroyed volume.
const (
	// VolumeDataRequired: a completed snapshot of every volume.
	VolumeDataRequired VolumeData = "Required"
	// VolumeDataObjectsOnly: the claim's object alone, where its volume cannot be snapshotted.
	VolumeDataObjectsOnly VolumeData = "ObjectsOnly"
)

// DefaultVeleroNamespace is Velero's namespace when a policy leaves it out.
const DefaultVeleroNamespace = "velero"

// CleanupPolicyStatus reports what a policy manages now.
type CleanupPolicyStatus struct {
	// managedCSVs is how many CSVs this policy manages now (it selects them and wins over other policies).
	// +optional
	ManagedCSVs int32 `json:"managedCSVs"`

	// managedClusterExtensions is how many ClusterExtensions this policy manages now.
	// +optional
	ManagedClusterExtensions int32 `json:"managedClusterExtensions,omitempty"`

	// conditions: Overlapping is True when another policy selects some of the same CSVs.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ConditionOverlapping is the CleanupPolicy condition set when another policy selects some of the same CSVs.
const ConditionOverlapping = "Overlapping"

// CleanupPolicy says which ClusterServiceVersions csv-cleaner manages and what their uninstall removes.
// With no policy at all, csv-cleaner manages nothing.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cp
// +kubebuilder:printcolumn:name="PRIORITY",type=integer,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="OPERANDS",type=string,JSONPath=`.spec.operands`
// +kubebuilder:printcolumn:name="MANAGED",type=integer,JSONPath=`.status.managedCSVs`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type CleanupPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CleanupPolicySpec   `json:"spec,omitempty"`
	Status CleanupPolicyStatus `json:"status,omitempty"`
}

// CleanupPolicyList is a list of CleanupPolicy.
//
// +kubebuilder:object:root=true
type CleanupPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CleanupPolicy `json:"items"`
}

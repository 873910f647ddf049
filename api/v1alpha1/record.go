package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// UninstallRecord is the record of one uninstall: a CSVCleanup (of a CSV)
// or an ExtensionCleanup (of a ClusterExtension). What reads or writes a
// record of either kind does it through these methods, not a switch on
// the kind.
// +kubebuilder:object:generate=false
type UninstallRecord interface {
	metav1.Object
	runtime.Object
	// Uninstall is the uninstall's progress, the part both kinds share.
	Uninstall() *UninstallStatus
	// SubjectUID is the UID of what is uninstalled: a record of another
	// UID belongs to an earlier owner of the same name.
	SubjectUID() types.UID
	// Restart starts the status afresh for the owner of uid.
	Restart(uid types.UID)
	// WholeStatus is the record's status as it is written (the subject's
	// UID and what only one kind records too).
	WholeStatus() any
}

// NewRecord is an empty record: an ExtensionCleanup for a ClusterExtension
// (extension), else a CSVCleanup.
func NewRecord(extension bool) UninstallRecord {
	if extension {
		return &ExtensionCleanup{}
	}
	return &CSVCleanup{}
}

// Uninstall is the CSV's uninstall's progress.
func (r *CSVCleanup) Uninstall() *UninstallStatus { return &r.Status.UninstallStatus }

// SubjectUID is the CSV's UID.
func (r *CSVCleanup) SubjectUID() types.UID { return r.Status.CSVUID }

// Restart starts the status afresh for the CSV of uid.
func (r *CSVCleanup) Restart(uid types.UID) { r.Status = CSVCleanupStatus{CSVUID: uid} }

// WholeStatus is the status as it is written.
func (r *CSVCleanup) WholeStatus() any { return r.Status }

// Uninstall is the ClusterExtension's uninstall's progress.
func (r *ExtensionCleanup) Uninstall() *UninstallStatus { return &r.Status.UninstallStatus }

// SubjectUID is the ClusterExtension's UID.
func (r *ExtensionCleanup) SubjectUID() types.UID { return r.Status.ExtensionUID }

// Restart starts the status afresh for the ClusterExtension of uid.
func (r *ExtensionCleanup) Restart(uid types.UID) {
	r.Status = ExtensionCleanupStatus{ExtensionUID: uid}
}

// WholeStatus is the status as it is written.
func (r *ExtensionCleanup) WholeStatus() any { return r.Status }

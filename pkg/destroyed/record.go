package destroyed

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// Record is what an uninstall destroys and its verified Backup holds:
// what `csv-cleaner undo` restores, and nothing else. The gate keeps it
// beside the Backup, before the first delete (pkg/velero keeps it in
// ConfigMaps of Velero's namespace that the Backup owns), so that it
// outlives the uninstall's record and goes with the Backup. An undo a year
// from now reads what today's gate wrote: Version says which shape it has.
type Record struct {
	// Version is the shape of the record (CurrentVersion when written);
	// a record written before it was versioned has none (0), and reads as 1.
	Version int `json:"version,omitempty"`
	// Owner is the uninstall's owner (its UID is not kept). The record
	// names it by the keys of version 1 (ownerKeys): "owner" for a person,
	// "ownerKind", "ownerNamespace" and "ownerName" for a program.
	Owner decide.Owner `json:"-"`
	// Backup is the verified Backup's name.
	Backup   string      `json:"backup"`
	Verified metav1.Time `json:"verified"`
	// Deleted are the objects the uninstall deletes; Dependents, those the
	// garbage collector deletes because of them (without the kinds a
	// controller makes again); Volumes, the claims among the dependents and
	// what the Backup holds of their data.
	Deleted    []decide.Held   `json:"deleted"`
	Dependents []decide.Held   `json:"dependents"`
	Volumes    []decide.Volume `json:"volumes,omitempty"`
	// Origins are the custom resources it deletes and the dependents as they
	// were: their UIDs and ownerReferences, which the undo writes again
	// (undoplan.Relink). A record written before they were kept has none.
	Origins []decide.Origin `json:"origins,omitempty"`
	// Versions are the versions the Backup holds each kind at (Kind.group),
	// as its resource list says (decide.BackedUpVersions): the undo checks
	// that they are served before it asks Velero to restore them.
	Versions map[string]string `json:"versions,omitempty"`
}

// CurrentVersion is the version of the records this csv-cleaner writes.
// A change a reader of an older csv-cleaner would misread (a field
// renamed, its meaning changed) takes a new version, and Decode a reader of
// it; a field added with omitempty does not.
const CurrentVersion = 1

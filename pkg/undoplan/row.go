package undoplan

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// The states of an object an undo restores.
const (
	// StatePresent: it was there before the undo: nothing was restored.
	StatePresent = "present"
	// StateRestored: it was missing, and the Restore brought it back.
	StateRestored = "restored"
	// StateMissing: it is missing still.
	StateMissing = "missing"
	// StateUnread: its kind could not be listed, so whether it is there is
	// not known: it is not restored (Row.Problem says why).
	StateUnread = "unread"
)

// Row is one object the uninstall destroyed, and where the undo left it.
type Row struct {
	Object decide.Held `json:"object"`
	State  string      `json:"state"`
	// Volume says, for a PersistentVolumeClaim, what it is bound to.
	Volume string `json:"volume,omitempty"`
	// Problem says what is wrong with a restored object (a claim not bound
	// to a volume made from its snapshot).
	Problem string `json:"problem,omitempty"`
	// Owners are the owners the undo linked it to again ("Kind
	// namespace/name"); OwnersLeftOut, those of its original owners it left
	// out, and why (Relink).
	Owners        []string `json:"owners,omitempty"`
	OwnersLeftOut []string `json:"ownersLeftOut,omitempty"`
}

// NotBack reports whether the row is not back as the uninstall left it:
// missing, of a kind that could not be listed, or with a problem.
func (r Row) NotBack() bool {
	return r.State == StateMissing || r.State == StateUnread || r.Problem != ""
}

// Found is what an undo found of one object before its Restore: Unread
// says why its kind could not be listed ("" when it could), There whether
// it is there.
type Found struct {
	Unread string
	There  bool
}

// Rows judges the objects an undo wants by what it found of each
// (found): present, unread (not restored: run again once the kind can be
// listed) or missing. missing are those a Restore brings back.
func Rows(wanted []decide.Held, found func(decide.Held) Found) (rows []Row, missing []decide.Held) {
	for _, h := range wanted {
		row := Row{Object: h, State: StatePresent}
		switch f := found(h); {
		case f.Unread != "":
			row.State, row.Problem = StateUnread, f.Unread+"; not restored: run the undo again once the kind can be listed"
		case !f.There:
			missing = append(missing, h)
			row.State = StateMissing
		}
		rows = append(rows, row)
	}
	return rows, missing
}

// After is what an undo reads of an object once its Restore ended.
type After struct {
	// Restored: the Restore's label is on it.
	Restored bool
	// Link is what the undo linked it to, if it linked it.
	Link *Link
	// Claim is the claim, for a PersistentVolumeClaim there; Snapshot,
	// whether the Backup holds its volume's snapshot.
	Claim    *corev1.PersistentVolumeClaim
	Snapshot bool
}

// Settle judges a row once the Restore ended (after): restored when the
// Restore's label is on a present object, the owners it was linked to, and
// what a claim is bound to (a problem when a restored claim whose snapshot
// the Backup holds is not bound to a volume made from it).
func Settle(row Row, after After) Row {
	if row.State == StatePresent && after.Restored {
		row.State = StateRestored
	}
	if after.Link != nil {
		row.Owners, row.OwnersLeftOut = after.Link.Linked, after.Link.LeftOut
	}
	if row.State != StateMissing && row.State != StateUnread && row.Object.Group == "" && row.Object.Kind == "PersistentVolumeClaim" {
		row.Volume, row.Problem = ClaimVolume(after.Claim, row.State == StateRestored && after.Snapshot)
	}
	return row
}

// ClaimVolume says what a claim there is bound to; problem is set when it
// is not bound to a volume made from its snapshot (snapshot: the backup
// holds one, and it was restored).
func ClaimVolume(pvc *corev1.PersistentVolumeClaim, snapshot bool) (volume, problem string) {
	if pvc == nil {
		return "", ""
	}
	source := ""
	if ds := pvc.Spec.DataSource; ds != nil && ds.Kind == "VolumeSnapshot" {
		source = ds.Name
	}
	switch {
	case pvc.Status.Phase != corev1.ClaimBound:
		volume = string(pvc.Status.Phase)
		if snapshot {
			problem = "not bound to a volume"
		}
	case source != "":
		volume = fmt.Sprintf("%s, from snapshot %s", pvc.Spec.VolumeName, source)
	default:
		volume = pvc.Spec.VolumeName
		if snapshot {
			problem = "bound to a volume not made from its snapshot"
		}
	}
	return volume, problem
}

// ClaimBindWait is how long after its Restore ended an undo waits for a
// restored claim Velero is making from its snapshot to be bound: Velero's
// --resource-timeout default, which its own restore waits for a claim whose
// PersistentVolume the Backup holds. csv-cleaner's Backups leave the PVs
// out, so Velero ends the Restore before such claims are bound.
const ClaimBindWait = 10 * time.Minute

// Binding says whether a restored claim whose snapshot the Backup holds is
// still being made from it: Pending, with the VolumeSnapshot Velero gave it
// as its data source (the CSI provisioner makes its volume).
func Binding(pvc *corev1.PersistentVolumeClaim, snapshot bool) bool {
	return snapshot && pvc != nil && pvc.Status.Phase == corev1.ClaimPending &&
		pvc.Spec.DataSource != nil && pvc.Spec.DataSource.Kind == "VolumeSnapshot"
}

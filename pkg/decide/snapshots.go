package decide

import (
	"cmp"
	"slices"
	"strings"
)

// VolumeSnapshotAnnotation is what Velero's CSI action writes on a claim
// it snapshots, in the Backup's copy: the name of its VolumeSnapshot, from
// which Velero's restore makes the claim's volume.
const VolumeSnapshotAnnotation = "velero.io/volume-snapshot-name"

// SnapshotItem is a VolumeSnapshot as a Backup's contents hold it.
type SnapshotItem struct {
	Namespace, Name string
	// Claim is its spec.source.persistentVolumeClaimName.
	Claim string
	// Content is its status.boundVolumeSnapshotContentName; Error, its
	// status.error.message.
	Content, Error string
}

// SnapshotsHeld is what a Backup's contents hold of the claims' CSI
// snapshots: the claims (namespace/name) with their
// VolumeSnapshotAnnotation, the VolumeSnapshots, and the snapshot handle
// of each VolumeSnapshotContent ("" when it has none).
type SnapshotsHeld struct {
	Claims    map[string]string
	Snapshots []SnapshotItem
	Handles   map[string]string
}

// CSISnapshotsHeld reads the volume backups a Backup holds from its
// contents, as Velero's CSI restore will use them: a claim whose copy
// names a VolumeSnapshot of that claim, also in the Backup, bound to a
// VolumeSnapshotContent in the Backup with a snapshot handle, is held
// (succeeded); one whose chain breaks, or whose VolumeSnapshot has an
// error, failed. This is Velero v1.18's volume information for a Backup
// that does not hold the claims' PersistentVolumes (which drops them), read
// from the objects its restore reads: used with a Completed Backup only,
// whose snapshot operations all completed.
func CSISnapshotsHeld(h SnapshotsHeld) []VolumeBackup {
	snapshots := map[string]SnapshotItem{}
	for _, s := range h.Snapshots {
		snapshots[s.Namespace+"/"+s.Name] = s
	}
	out := make([]VolumeBackup, 0, len(h.Claims))
	for claim, name := range h.Claims {
		if name == "" {
			continue
		}
		ns, pvc, _ := strings.Cut(claim, "/")
		s, found := snapshots[ns+"/"+name]
		result := "failed"
		if found && s.Claim == pvc && s.Error == "" && s.Content != "" && h.Handles[s.Content] != "" {
			result = "succeeded"
		}
		out = append(out, VolumeBackup{Namespace: ns, Claim: pvc, Method: "CSISnapshot", Result: result})
	}
	slices.SortFunc(out, func(a, b VolumeBackup) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Claim, b.Claim))
	})
	return out
}

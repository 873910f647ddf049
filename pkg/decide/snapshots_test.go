package decide

import (
	"reflect"
	"testing"
)

// TestCSISnapshotsHeld: a claim is held only through the whole chain
// Velero's CSI restore follows: its copy's annotation, a VolumeSnapshot of
// that claim, bound, without an error, to a content with a handle.
func TestCSISnapshotsHeld(t *testing.T) {
	ok := SnapshotItem{Namespace: "a", Name: "velero-data-x1", Claim: "data", Content: "snapcontent-1"}
	handles := map[string]string{"snapcontent-1": "snap-1", "snapcontent-2": ""}
	held := func(ns, claim, result string) VolumeBackup {
		return VolumeBackup{Namespace: ns, Claim: claim, Method: "CSISnapshot", Result: result}
	}
	tests := []struct {
		name string
		in   SnapshotsHeld
		want []VolumeBackup
	}{
		{name: "the whole chain", in: SnapshotsHeld{Claims: map[string]string{"a/data": "velero-data-x1"}, Snapshots: []SnapshotItem{ok}, Handles: handles},
			want: []VolumeBackup{held("a", "data", "succeeded")}},
		{name: "a claim not annotated was not snapshotted: no entry", in: SnapshotsHeld{Claims: map[string]string{"a/data": ""}, Snapshots: []SnapshotItem{ok}, Handles: handles},
			want: []VolumeBackup{}},
		{name: "its VolumeSnapshot not in the Backup", in: SnapshotsHeld{Claims: map[string]string{"a/data": "velero-data-x1"}, Handles: handles},
			want: []VolumeBackup{held("a", "data", "failed")}},
		{name: "a VolumeSnapshot of another claim", in: SnapshotsHeld{Claims: map[string]string{"a/logs": "velero-data-x1"}, Snapshots: []SnapshotItem{ok}, Handles: handles},
			want: []VolumeBackup{held("a", "logs", "failed")}},
		{name: "a VolumeSnapshot of the same name in another namespace", in: SnapshotsHeld{Claims: map[string]string{"b/data": "velero-data-x1"}, Snapshots: []SnapshotItem{ok}, Handles: handles},
			want: []VolumeBackup{held("b", "data", "failed")}},
		{name: "an error on the VolumeSnapshot", in: SnapshotsHeld{Claims: map[string]string{"a/data": "velero-data-x1"},
			Snapshots: []SnapshotItem{{Namespace: "a", Name: "velero-data-x1", Claim: "data", Content: "snapcontent-1", Error: "driver failed"}}, Handles: handles},
			want: []VolumeBackup{held("a", "data", "failed")}},
		{name: "not bound to a content", in: SnapshotsHeld{Claims: map[string]string{"a/data": "velero-data-x1"},
			Snapshots: []SnapshotItem{{Namespace: "a", Name: "velero-data-x1", Claim: "data"}}, Handles: handles},
			want: []VolumeBackup{held("a", "data", "failed")}},
		{name: "its content without a handle, or not in the Backup", in: SnapshotsHeld{Claims: map[string]string{"a/data": "s2", "a/logs": "s3"},
			Snapshots: []SnapshotItem{{Namespace: "a", Name: "s2", Claim: "data", Content: "snapcontent-2"}, {Namespace: "a", Name: "s3", Claim: "logs", Content: "snapcontent-3"}}, Handles: handles},
			want: []VolumeBackup{held("a", "data", "failed"), held("a", "logs", "failed")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CSISnapshotsHeld(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("CSISnapshotsHeld = %+v, want %+v", got, tt.want)
			}
		})
	}
}

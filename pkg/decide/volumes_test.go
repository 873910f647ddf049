package decide

import (
	"cmp"
	"strings"
	"testing"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

func TestDecideVolume(t *testing.T) {
	claim := Node{Held: Held{Kind: "PersistentVolumeClaim", Resource: "persistentvolumeclaims", Namespace: "a", Name: "data"}, VolumeName: "pv-1"}
	labelled := SnapshotClass{Name: "csi-snap", Driver: "hostpath.csi", Labelled: true}
	other := SnapshotClass{Name: "other", Driver: "hostpath.csi"}
	no := false
	tests := []struct {
		name      string
		in        VolumeInput
		wantClass string
		snapshot  bool
		blocks    string // a part of the problem's message
		reason    string // the problem's reason, VolumeNotSnapshottable unless said
	}{
		{name: "a CSI volume with Velero's class", in: VolumeInput{Bound: true, VolumeFound: true, Driver: "hostpath.csi", Classes: []SnapshotClass{other, labelled}}, wantClass: "csi-snap", snapshot: true},
		{name: "the driver's default class", in: VolumeInput{Bound: true, VolumeFound: true, Driver: "hostpath.csi", Classes: []SnapshotClass{other, {Name: "def", Driver: "hostpath.csi", Default: true}}}, wantClass: "def", snapshot: true},
		{name: "the driver's only class", in: VolumeInput{Bound: true, VolumeFound: true, Driver: "hostpath.csi", Classes: []SnapshotClass{other}}, wantClass: "other", snapshot: true},
		{name: "the claim's annotation wins", in: VolumeInput{Bound: true, VolumeFound: true, Driver: "hostpath.csi", ClassAnnotation: "other", Classes: []SnapshotClass{labelled, other}}, wantClass: "other", snapshot: true},
		{name: "an annotation naming another driver's class blocks", in: VolumeInput{Bound: true, VolumeFound: true, Driver: "hostpath.csi", ClassAnnotation: "ebs", Classes: []SnapshotClass{labelled, {Name: "ebs", Driver: "ebs.csi"}}}, blocks: "not for its driver"},
		{name: "no class for the driver blocks", in: VolumeInput{Bound: true, VolumeFound: true, Driver: "hostpath.csi", Classes: []SnapshotClass{{Name: "ebs", Driver: "ebs.csi", Labelled: true}}}, blocks: "has no VolumeSnapshotClass"},
		{name: "two unmarked classes for the driver block", in: VolumeInput{Bound: true, VolumeFound: true, Driver: "hostpath.csi", Classes: []SnapshotClass{other, {Name: "other2", Driver: "hostpath.csi"}}}, blocks: "none is labelled"},
		{name: "a volume that is not CSI blocks", in: VolumeInput{Bound: true, VolumeFound: true, Classes: []SnapshotClass{labelled}}, blocks: "not a CSI volume"},
		{name: "a volume not found blocks", in: VolumeInput{Bound: true, Driver: "", Classes: []SnapshotClass{labelled}}, blocks: "was not found"},
		{name: "snapshotVolumes: false blocks", in: VolumeInput{Bound: true, VolumeFound: true, Driver: "hostpath.csi", Classes: []SnapshotClass{labelled}, SnapshotVolumes: &no}, blocks: "snapshotVolumes is false"},
		{name: "ObjectsOnly accepts a volume that is not CSI", in: VolumeInput{Bound: true, VolumeFound: true, VolumeData: cleanupv1alpha1.VolumeDataObjectsOnly}},
		{name: "ObjectsOnly still snapshots what it can", in: VolumeInput{Bound: true, VolumeFound: true, Driver: "hostpath.csi", Classes: []SnapshotClass{labelled}, VolumeData: cleanupv1alpha1.VolumeDataObjectsOnly}, wantClass: "csi-snap", snapshot: true},
		{name: "a claim not bound has no data", in: VolumeInput{}},
		{name: "a claim a Restore marked blocks", in: VolumeInput{Bound: true, VolumeFound: true, Driver: "hostpath.csi", Classes: []SnapshotClass{labelled}, MarkedByRestore: true},
			blocks: "annotate persistentvolumeclaim data " + VeleroMustIncludeAnnotation + "-", reason: cleanupv1alpha1.BlockedClaimMarkedByRestore},
		{name: "a claim a Restore marked blocks under ObjectsOnly too", in: VolumeInput{Bound: true, VolumeFound: true, VolumeData: cleanupv1alpha1.VolumeDataObjectsOnly, MarkedByRestore: true},
			blocks: "takes the claim's PersistentVolume pv-1", reason: cleanupv1alpha1.BlockedClaimMarkedByRestore},
		{name: "a marked claim not bound has no volume to take", in: VolumeInput{MarkedByRestore: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Claim = claim
			got := DecideVolume(tt.in)
			if got.SnapshotClass != tt.wantClass || got.Snapshot != tt.snapshot {
				t.Errorf("DecideVolume = class %q, snapshot %v; want %q, %v", got.SnapshotClass, got.Snapshot, tt.wantClass, tt.snapshot)
			}
			switch {
			case tt.blocks == "" && got.Problem != nil:
				t.Errorf("DecideVolume blocks: %s", got.Problem.Message)
			case tt.blocks != "" && got.Problem == nil:
				t.Errorf("DecideVolume does not block, want it to (%s)", tt.blocks)
			case tt.blocks != "" && (got.Problem.Reason != cmp.Or(tt.reason, cleanupv1alpha1.BlockedVolumeNotSnapshottable) || !strings.Contains(got.Problem.Message, tt.blocks) ||
				!strings.Contains(got.Problem.Message, "PersistentVolumeClaim a/data") || got.Problem.Object != "PersistentVolumeClaim a/data"):
				t.Errorf("DecideVolume blocks with %+v; want %s naming the claim and saying %q", got.Problem, cmp.Or(tt.reason, cleanupv1alpha1.BlockedVolumeNotSnapshottable), tt.blocks)
			case !got.Snapshot && got.Note == "":
				t.Errorf("DecideVolume takes no snapshot and says nothing of why")
			}
		})
	}
}

func TestVerifyVolumes(t *testing.T) {
	vol := func(ns, name string, snapshot bool) Volume {
		return Volume{Claim: Held{Kind: "PersistentVolumeClaim", Resource: "persistentvolumeclaims", Namespace: ns, Name: name}, Snapshot: snapshot}
	}
	ok := func(ns, name string) VolumeBackup {
		return VolumeBackup{Namespace: ns, Claim: name, Method: "CSISnapshot", Result: "succeeded"}
	}
	tests := []struct {
		name    string
		held    []VolumeBackup
		volumes []Volume
		missing string
	}{
		{name: "every snapshot completed", held: []VolumeBackup{ok("a", "d1"), ok("b", "d2")}, volumes: []Volume{vol("a", "d1", true), vol("b", "d2", true)}},
		{name: "a volume that needs none", volumes: []Volume{vol("a", "d1", false)}},
		{name: "a snapshot that failed", held: []VolumeBackup{{Namespace: "a", Claim: "d1", Method: "CSISnapshot", Result: "failed"}}, volumes: []Volume{vol("a", "d1", true)}, missing: "a/d1"},
		{name: "a volume skipped", held: []VolumeBackup{{Namespace: "a", Claim: "d1", Skipped: true}}, volumes: []Volume{vol("a", "d1", true)}, missing: "a/d1"},
		{name: "no volume information", volumes: []Volume{vol("a", "d1", true)}, missing: "a/d1"},
		{name: "another namespace's claim of the name", held: []VolumeBackup{ok("b", "d1")}, volumes: []Volume{vol("a", "d1", true)}, missing: "a/d1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := VerifyVolumes("b1", tt.held, tt.volumes)
			switch {
			case tt.missing == "" && p != nil:
				t.Errorf("VerifyVolumes blocks: %s", p.Message)
			case tt.missing != "" && (p == nil || p.Reason != cleanupv1alpha1.BlockedBackupIncomplete || !strings.Contains(p.Message, tt.missing)):
				t.Errorf("VerifyVolumes = %+v, want %s naming %s", p, cleanupv1alpha1.BlockedBackupIncomplete, tt.missing)
			}
		})
	}
}

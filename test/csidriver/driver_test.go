package csidriver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// TestSnapshotRoundTrip: a file written into a volume comes back, byte for
// byte, in a volume made from the volume's snapshot, after the volume and
// its data are deleted; ListSnapshots finds the snapshot by id and by volume.
func TestSnapshotRoundTrip(t *testing.T) {
	dir := t.TempDir()
	d, err := Start("test.csi.example.com", filepath.Join(dir, "csi.sock"), filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	conn, err := grpc.NewClient("unix://"+d.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	ctx := context.Background()
	cc := csi.NewControllerClient(conn)

	vol, err := cc.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1", CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	again, err := cc.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-1"})
	if err != nil || again.GetVolume().GetVolumeId() != vol.GetVolume().GetVolumeId() {
		t.Fatalf("a retried CreateVolume = %v, %v; want the same volume %s", again, err, vol.GetVolume().GetVolumeId())
	}
	data := bytes.Repeat([]byte("csv-cleaner"), 6000)
	if err := os.MkdirAll(filepath.Join(d.VolumePath(vol.GetVolume().GetVolumeId()), "db"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.VolumePath(vol.GetVolume().GetVolumeId()), "db", "data"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := cc.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snapshot-1", SourceVolumeId: vol.GetVolume().GetVolumeId()})
	if err != nil {
		t.Fatal(err)
	}
	if !snap.GetSnapshot().GetReadyToUse() {
		t.Fatal("the snapshot is not ready to use")
	}
	if _, err := cc.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: vol.GetVolume().GetVolumeId()}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.VolumePath(vol.GetVolume().GetVolumeId())); !os.IsNotExist(err) {
		t.Fatalf("the deleted volume's files are still there: %v", err)
	}
	for _, req := range []*csi.ListSnapshotsRequest{{SnapshotId: snap.GetSnapshot().GetSnapshotId()}, {SourceVolumeId: vol.GetVolume().GetVolumeId()}} {
		list, err := cc.ListSnapshots(ctx, req)
		if err != nil || len(list.GetEntries()) != 1 || list.GetEntries()[0].GetSnapshot().GetSnapshotId() != snap.GetSnapshot().GetSnapshotId() {
			t.Fatalf("ListSnapshots(%v) = %v, %v; want the one snapshot", req, list, err)
		}
	}
	restored, err := cc.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "pvc-2", VolumeContentSource: &csi.VolumeContentSource{
		Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: snap.GetSnapshot().GetSnapshotId()}}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(d.VolumePath(restored.GetVolume().GetVolumeId()), "db", "data"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("the restored volume holds %d bytes that differ from the %d written", len(got), len(data))
	}
	if restored.GetVolume().GetContentSource().GetSnapshot().GetSnapshotId() != snap.GetSnapshot().GetSnapshotId() {
		t.Fatalf("the restored volume names source %v, want snapshot %s", restored.GetVolume().GetContentSource(), snap.GetSnapshot().GetSnapshotId())
	}
}

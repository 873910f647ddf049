package csidriver

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The Controller service.

func (d *Driver) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	var caps []*csi.ControllerServiceCapability
	for _, c := range []csi.ControllerServiceCapability_RPC_Type{
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT,
		csi.ControllerServiceCapability_RPC_LIST_SNAPSHOTS,
	} {
		caps = append(caps, &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: c}}})
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: caps}, nil
}

// CreateVolume makes a directory; from a snapshot, the snapshot's extraction.
func (d *Driver) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "a volume needs a name")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	id := idOf("vol-", req.GetName())
	size := req.GetCapacityRange().GetRequiredBytes()
	var source *csi.VolumeContentSource
	snapshot := req.GetVolumeContentSource().GetSnapshot().GetSnapshotId()
	if r, ok, err := d.readRecord(d.VolumePath(id) + ".json"); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	} else if ok {
		if r.Snapshot != "" {
			source = req.GetVolumeContentSource()
		}
		return &csi.CreateVolumeResponse{Volume: &csi.Volume{VolumeId: id, CapacityBytes: r.Bytes, ContentSource: source}}, nil
	}
	if req.GetVolumeContentSource() != nil && snapshot == "" {
		return nil, status.Error(codes.InvalidArgument, "only snapshots can be a volume's source")
	}
	if err := os.MkdirAll(d.VolumePath(id), 0o755); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if snapshot != "" {
		snap, ok, err := d.readRecord(d.snapshotPath(snapshot) + ".json")
		if err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		if !ok {
			return nil, status.Errorf(codes.NotFound, "snapshot %s does not exist", snapshot)
		}
		if err := extract(d.snapshotPath(snapshot), d.VolumePath(id)); err != nil {
			return nil, status.Errorf(codes.Internal, "restoring snapshot %s: %v", snapshot, err)
		}
		size = max(size, snap.Bytes)
		source = req.GetVolumeContentSource()
	}
	if err := d.writeRecord(d.VolumePath(id)+".json", record{Name: req.GetName(), Bytes: size, Snapshot: snapshot}); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{VolumeId: id, CapacityBytes: size, ContentSource: source}}, nil
}

// DeleteVolume removes a volume's directory: its data is gone.
func (d *Driver) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	if !strings.HasPrefix(req.GetVolumeId(), "vol-") || strings.Contains(req.GetVolumeId(), "/") {
		return nil, status.Error(codes.InvalidArgument, "not a volume of this driver")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := os.RemoveAll(d.VolumePath(req.GetVolumeId())); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if err := os.Remove(d.VolumePath(req.GetVolumeId()) + ".json"); err != nil && !os.IsNotExist(err) {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.DeleteVolumeResponse{}, nil
}

// ValidateVolumeCapabilities confirms every capability: a directory serves them all.
func (d *Driver) ValidateVolumeCapabilities(_ context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	if _, err := os.Stat(d.VolumePath(req.GetVolumeId())); err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %s: %v", req.GetVolumeId(), err)
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeCapabilities: req.GetVolumeCapabilities(), VolumeContext: req.GetVolumeContext(), Parameters: req.GetParameters()}}, nil
}

// CreateSnapshot writes a gzipped tarball of the source volume.
func (d *Driver) CreateSnapshot(_ context.Context, req *csi.CreateSnapshotRequest) (*csi.CreateSnapshotResponse, error) {
	if req.GetName() == "" || req.GetSourceVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "a snapshot needs a name and a source volume")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	id := idOf("snap-", req.GetName())
	if r, ok, err := d.readRecord(d.snapshotPath(id) + ".json"); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	} else if ok {
		if r.Source != req.GetSourceVolumeId() {
			return nil, status.Errorf(codes.AlreadyExists, "snapshot %s exists for another volume", req.GetName())
		}
		return &csi.CreateSnapshotResponse{Snapshot: r.snapshot(id)}, nil
	}
	vol, ok, err := d.readRecord(d.VolumePath(req.GetSourceVolumeId()) + ".json")
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if !ok {
		return nil, status.Errorf(codes.NotFound, "volume %s does not exist", req.GetSourceVolumeId())
	}
	if err := archive(d.VolumePath(req.GetSourceVolumeId()), d.snapshotPath(id)); err != nil {
		return nil, status.Errorf(codes.Internal, "archiving volume %s: %v", req.GetSourceVolumeId(), err)
	}
	r := record{Name: req.GetName(), Bytes: vol.Bytes, Source: req.GetSourceVolumeId(), Created: time.Now().UnixNano()}
	if err := d.writeRecord(d.snapshotPath(id)+".json", r); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.CreateSnapshotResponse{Snapshot: r.snapshot(id)}, nil
}

func (r record) snapshot(id string) *csi.Snapshot {
	return &csi.Snapshot{SnapshotId: id, SourceVolumeId: r.Source, SizeBytes: r.Bytes, ReadyToUse: true,
		CreationTime: timestamppb.New(time.Unix(0, r.Created))}
}

// DeleteSnapshot removes a snapshot's tarball.
func (d *Driver) DeleteSnapshot(_ context.Context, req *csi.DeleteSnapshotRequest) (*csi.DeleteSnapshotResponse, error) {
	if !strings.HasPrefix(req.GetSnapshotId(), "snap-") || strings.Contains(req.GetSnapshotId(), "/") {
		return nil, status.Error(codes.InvalidArgument, "not a snapshot of this driver")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range []string{d.snapshotPath(req.GetSnapshotId()), d.snapshotPath(req.GetSnapshotId()) + ".json"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return nil, status.Error(codes.Internal, err.Error())
		}
	}
	return &csi.DeleteSnapshotResponse{}, nil
}

// ListSnapshots lists one snapshot by id, a volume's snapshots, or all.
func (d *Driver) ListSnapshots(_ context.Context, req *csi.ListSnapshotsRequest) (*csi.ListSnapshotsResponse, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	paths, err := filepath.Glob(filepath.Join(d.Dir, "snapshots", "*.tar.gz.json"))
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	sort.Strings(paths)
	out := &csi.ListSnapshotsResponse{}
	for _, p := range paths {
		id := strings.TrimSuffix(filepath.Base(p), ".tar.gz.json")
		if req.GetSnapshotId() != "" && id != req.GetSnapshotId() {
			continue
		}
		r, ok, err := d.readRecord(p)
		if err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		if !ok || req.GetSourceVolumeId() != "" && r.Source != req.GetSourceVolumeId() {
			continue
		}
		out.Entries = append(out.Entries, &csi.ListSnapshotsResponse_Entry{Snapshot: r.snapshot(id)})
	}
	return out, nil
}

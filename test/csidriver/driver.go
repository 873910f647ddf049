package csidriver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
)

// Driver is a running CSI driver whose volumes and snapshots are under Dir.
type Driver struct {
	// Name is the driver's name, as StorageClasses and VolumeSnapshotClasses name it.
	Name string
	// Dir holds volumes/<id>/ (a volume's files) and snapshots/<id>.tar.gz.
	Dir string
	// NodeID is what NodeGetInfo answers.
	NodeID string
	// Socket is the Unix socket it serves on.
	Socket string

	mu  sync.Mutex
	srv *grpc.Server

	csi.UnimplementedIdentityServer
	csi.UnimplementedControllerServer
	csi.UnimplementedNodeServer
}

// Start serves a driver called name on the Unix socket, its state under dir.
func Start(name, socket, dir string) (*Driver, error) {
	d := &Driver{Name: name, Dir: dir, NodeID: "csv-cleaner-test-node", Socket: socket}
	for _, sub := range []string{"volumes", "snapshots"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.Remove(socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", socket, err)
	}
	d.srv = grpc.NewServer()
	csi.RegisterIdentityServer(d.srv, d)
	csi.RegisterControllerServer(d.srv, d)
	csi.RegisterNodeServer(d.srv, d)
	go func() { _ = d.srv.Serve(ln) }()
	return d, nil
}

// Stop stops serving; the state stays on disk.
func (d *Driver) Stop() { d.srv.Stop() }

// VolumePath is the directory holding the files of the volume of handle
// (a PersistentVolume's spec.csi.volumeHandle).
func (d *Driver) VolumePath(handle string) string {
	return filepath.Join(d.Dir, "volumes", handle)
}

// snapshotPath is the tarball of a snapshot.
func (d *Driver) snapshotPath(id string) string {
	return filepath.Join(d.Dir, "snapshots", id+".tar.gz")
}

// idOf is the stable id of what a CSI request names: the same name gives the
// same id, so that a retried request finds what the first made.
func idOf(prefix, name string) string {
	sum := sha256.Sum256([]byte(name))
	return prefix + hex.EncodeToString(sum[:8])
}

// record is what the driver keeps beside a volume or a snapshot.
type record struct {
	Name     string `json:"name"`
	Bytes    int64  `json:"bytes"`
	Source   string `json:"source,omitempty"`
	Created  int64  `json:"created,omitempty"`
	Snapshot string `json:"snapshot,omitempty"`
}

func (d *Driver) writeRecord(path string, r record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func (d *Driver) readRecord(path string) (record, bool, error) {
	var r record
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	return r, true, json.Unmarshal(b, &r)
}

// Identity service.

func (d *Driver) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: d.Name, VendorVersion: "0.1.0"}, nil
}

func (d *Driver) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	return &csi.GetPluginCapabilitiesResponse{Capabilities: []*csi.PluginCapability{{
		Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{Type: csi.PluginCapability_Service_CONTROLLER_SERVICE}},
	}}}, nil
}

func (d *Driver) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}

// Node service: only what the sidecars ask.

func (d *Driver) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: d.NodeID}, nil
}

func (d *Driver) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{}, nil
}

package controlplane

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// SnapshotModule is external-snapshotter's client module, pinned by the
// helper module that builds the snapshot controller and csi-snapshotter
// (hack/control-plane/csi-snapshotter, make backup-tools).
const SnapshotModule = "github.com/kubernetes-csi/external-snapshotter/client/v8"

// SnapshotCRDs are the paths of every CRD of external-snapshotter's
// config/crd (VolumeSnapshot, VolumeSnapshotContent, VolumeSnapshotClass
// and the three group-snapshot CRDs, without which the snapshot
// controller waits 30 s and exits), from the module the helper pins,
// downloaded once into the module cache.
func SnapshotCRDs() ([]string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", SnapshotModule)
	cmd.Dir = filepath.Join(RepoRoot(), "hack", "control-plane", "csi-snapshotter")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("downloading the module %s: %w", SnapshotModule, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return nil, fmt.Errorf("reading where the module %s is: %w (%s)", SnapshotModule, err, out)
	}
	dir := filepath.Join(mod.Dir, "config", "crd")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the CRDs of the module %s: %w", SnapshotModule, err)
	}
	var paths []string
	for _, e := range entries {
		if filepath.Ext(e.Name()) == ".yaml" && e.Name() != "kustomization.yaml" {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	return paths, nil
}

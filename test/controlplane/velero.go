package controlplane

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// VeleroModule is Velero's module, pinned by the helper module that builds
// its server (hack/control-plane/velero, make backup-tools).
const VeleroModule = "github.com/vmware-tanzu/velero"

// VeleroReleaseDir is that helper module.
const VeleroReleaseDir = "hack/control-plane/velero"

// VeleroCRDs are the paths of Velero's CRDs (velero.io/v1: Backup,
// DownloadRequest, BackupStorageLocation, Restore and the rest; and
// v2alpha1, without which its server does not start) from the module the
// helper pins, downloaded once into the module cache.
func VeleroCRDs() ([]string, error) {
	dir, err := moduleDir(filepath.Join(RepoRoot(), VeleroReleaseDir), VeleroModule)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, version := range []string{"v1", "v2alpha1"} {
		dir := filepath.Join(dir, "config", "crd", version, "bases")
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("reading the CRDs of the module %s: %w", VeleroModule, err)
		}
		for _, e := range entries {
			if filepath.Ext(e.Name()) == ".yaml" {
				paths = append(paths, filepath.Join(dir, e.Name()))
			}
		}
	}
	return paths, nil
}

// moduleDir is where the module (path, or path@version) is in the module
// cache, downloaded there once through the module proxy, as the go.mod of
// dir pins it when it has no version.
func moduleDir(dir, module string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("downloading the module %s: %w (%s)", module, err, out)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("reading where the module %s is: %w (%s)", module, err, out)
	}
	return mod.Dir, nil
}

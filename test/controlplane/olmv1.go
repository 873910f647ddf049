package controlplane

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// OperatorControllerModule is OLM v1's module, pinned in go.mod.
const OperatorControllerModule = "github.com/operator-framework/operator-controller"

// OLMv1CRDs are the paths of the ClusterExtension and ClusterObjectSet CRDs
// operator-controller ships (its experimental set, which holds both), read
// from the module go.mod pins.
func OLMv1CRDs() ([]string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", OperatorControllerModule)
	cmd.Dir = RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("finding the module %s: %w", OperatorControllerModule, err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "helm", "olmv1", "base", "operator-controller", "crd", "experimental")
	var paths []string
	for _, f := range []string{"olm.operatorframework.io_clusterextensions.yaml", "olm.operatorframework.io_clusterobjectsets.yaml"} {
		p := filepath.Join(dir, f)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("OLM v1's CRD %s: %w", f, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// OperatorControllerReleaseDir is the helper module that builds the
// operator-controller release the end-to-end tests run (hack/control-plane).
const OperatorControllerReleaseDir = "hack/control-plane/operator-controller"

// OLMv1ReleaseCRDs are the ClusterCatalog and ClusterExtension CRDs (its
// standard set) of the operator-controller release that
// hack/control-plane/operator-controller pins, which bin/catalogd and
// bin/operator-controller are built from.
func OLMv1ReleaseCRDs() ([]string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", OperatorControllerModule)
	cmd.Dir = filepath.Join(RepoRoot(), OperatorControllerReleaseDir)
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("finding the module %s of %s: %w", OperatorControllerModule, cmd.Dir, err)
	}
	base := filepath.Join(strings.TrimSpace(string(out)), "config", "base")
	paths := []string{
		filepath.Join(base, "catalogd", "crd", "standard", "olm.operatorframework.io_clustercatalogs.yaml"),
		filepath.Join(base, "operator-controller", "crd", "standard", "olm.operatorframework.io_clusterextensions.yaml"),
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("OLM v1's CRD %s: %w", filepath.Base(p), err)
		}
	}
	return paths, nil
}

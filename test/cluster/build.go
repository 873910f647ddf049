package cluster

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
)

// build compiles a package of this repository into bin.
func build(bin, pkg string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Dir = controlplane.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %w\n%s", pkg, err, out)
	}
	return nil
}

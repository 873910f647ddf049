package cluster

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
)

// SampleOperator builds and starts the sample operator (test/sampleoperator)
// as its own process, authenticated as serviceAccount (namespace/name) by
// impersonation, managing kind in group in the given namespaces.
func (c *Cluster) SampleOperator(name, group, kind, serviceAccount string, namespaces ...string) (*controlplane.Process, error) {
	bin := filepath.Join(c.LogDir, "sample-operator")
	if _, err := os.Stat(bin); err != nil {
		if err := build(bin, "./test/sampleoperator"); err != nil {
			return nil, err
		}
	}
	return c.startProcess(name, bin, []string{
		"--kubeconfig=" + c.Kubeconfig, "--group=" + group, "--kind=" + kind,
		"--as-service-account=" + serviceAccount, "--namespaces=" + strings.Join(namespaces, ","),
	}, nil)
}

package controlplane

import "path/filepath"

// OpenTelemetryModule is the opentelemetry-operator release whose community
// bundle the specs of a kind nobody can read take their CRD from: its
// OpenTelemetryCollector serves v1alpha1 and stores v1beta1 behind a
// conversion webhook, as the bundles after 0.9x do.
const OpenTelemetryModule = "github.com/open-telemetry/opentelemetry-operator@v0.140.0"

// OpenTelemetryCollectorCRD is the path of that bundle's
// opentelemetrycollectors.opentelemetry.io CRD, downloaded once into the
// module cache.
func OpenTelemetryCollectorCRD() (string, error) {
	dir, err := moduleDir(RepoRoot(), OpenTelemetryModule)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "bundle", "community", "manifests", "opentelemetry.io_opentelemetrycollectors.yaml"), nil
}

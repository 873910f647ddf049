package bundle_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
	"sigs.k8s.io/yaml"

	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
)

// TestBundleValidators runs the validators `operator-sdk bundle validate
// --select-optional suite=operatorframework` runs: the default set, the
// OperatorHub validator (as its successors operatorhub/v2,
// standardcapabilities and standardcategories: the deprecated original only
// adds a warning that it is deprecated), good practices and deprecated
// APIs. The bundle must pass them with no error and no warning.
func TestBundleValidators(t *testing.T) {
	bundle, err := manifests.GetBundleFromDir(filepath.Join(controlplane.RepoRoot(), "bundle"))
	if err != nil {
		t.Fatalf("loading bundle/: %v", err)
	}
	validators := validation.DefaultBundleValidators.WithValidators(
		validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator,
		validation.StandardCategoriesValidator,
		validation.GoodPracticesValidator,
		validation.AlphaDeprecatedAPIsValidator,
	)
	results := validators.Validate(bundle, map[string]string{"k8s-version": "1.34"})
	checked := 0
	for _, r := range results {
		checked++
		for _, e := range r.Errors {
			t.Errorf("%s: error: %s", r.Name, describe(e))
		}
		for _, w := range r.Warnings {
			t.Errorf("%s: warning: %s", r.Name, describe(w))
		}
	}
	if checked == 0 {
		t.Fatal("no validator reported a result")
	}
	if !t.Failed() {
		t.Logf("%d validator results on bundle %s: no error, no warning", checked, bundle.Name)
	}
}

func describe(e errors.Error) string {
	if e.Field != "" {
		return e.Field + ": " + e.Detail
	}
	return e.Error()
}

// TestBundleCRDs checks that the bundle ships the CRDs of manifests/crd as
// they are: a CRD that loses a field on the way (its status subresource,
// say) installs through OLM and then fails csv-cleaner at run time.
func TestBundleCRDs(t *testing.T) {
	root := controlplane.RepoRoot()
	sources, err := filepath.Glob(filepath.Join(root, "manifests", "crd", "cleanup.csv-cleaner.io_*.yaml"))
	if err != nil || len(sources) == 0 {
		t.Fatalf("no CRD in manifests/crd: %v", err)
	}
	for _, src := range sources {
		shipped := filepath.Join(root, "bundle", "manifests", filepath.Base(src))
		want, got := readYAML(t, src), readYAML(t, shipped)
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s differs from %s: run `make bundle`, and check hack/bundle keeps every field", shipped, src)
		}
	}
}

func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	return obj
}

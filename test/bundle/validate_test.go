package bundle_test

import (
	"path/filepath"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"

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

package bundle_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
)

// TestBundleSecureMetrics checks what an admin who scrapes csv-cleaner
// installed through OLM relies on: the bundle ships the ClusterRole
// csv-cleaner-metrics-reader (get on /metrics) to bind the scraper to, and
// the CSV lets csv-cleaner's ServiceAccount create the TokenReviews and
// SubjectAccessReviews its metrics endpoint checks each client with.
func TestBundleSecureMetrics(t *testing.T) {
	bundle, err := manifests.GetBundleFromDir(filepath.Join(controlplane.RepoRoot(), "bundle"))
	if err != nil {
		t.Fatalf("loading bundle/: %v", err)
	}
	var reader *rbacv1.ClusterRole
	for _, obj := range bundle.Objects {
		if obj.GetKind() == "ClusterRole" && obj.GetName() == "csv-cleaner-metrics-reader" {
			reader = &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, reader); err != nil {
				t.Fatal(err)
			}
		}
	}
	switch {
	case reader == nil:
		t.Error("the bundle ships no ClusterRole csv-cleaner-metrics-reader")
	case len(reader.Rules) != 1 || !slices.Equal(reader.Rules[0].NonResourceURLs, []string{"/metrics"}) || !slices.Equal(reader.Rules[0].Verbs, []string{"get"}):
		t.Errorf("csv-cleaner-metrics-reader grants %v, want exactly get on /metrics", reader.Rules)
	}
	for _, want := range []struct{ group, resource string }{{"authentication.k8s.io", "tokenreviews"}, {"authorization.k8s.io", "subjectaccessreviews"}} {
		found := false
		for _, p := range bundle.CSV.Spec.InstallStrategy.StrategySpec.ClusterPermissions {
			for _, r := range p.Rules {
				if slices.Contains(r.APIGroups, want.group) && slices.Contains(r.Resources, want.resource) && slices.Contains(r.Verbs, "create") {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("the CSV's clusterPermissions do not let csv-cleaner create %s.%s", want.resource, want.group)
		}
	}
}

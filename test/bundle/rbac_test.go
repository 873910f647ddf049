package bundle_test

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// TestBundleLeastPrivilege checks what a reviewer of the bundle reads: no
// rule on `*`, no Secrets, no escalate or impersonate, bind only on the
// operand role, and the operand role shipped as an object with the
// aggregation selectors the README documents.
func TestBundleLeastPrivilege(t *testing.T) {
	bundle, err := manifests.GetBundleFromDir(filepath.Join(controlplane.RepoRoot(), "bundle"))
	if err != nil {
		t.Fatalf("loading bundle/: %v", err)
	}
	shipped, err := fixtures.ShippedClusterRole("role.yaml", "csv-cleaner")
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string][]rbacv1.PolicyRule{"manifests/rbac/role.yaml": shipped.Rules}
	for _, p := range bundle.CSV.Spec.InstallStrategy.StrategySpec.ClusterPermissions {
		rules["the CSV's clusterPermissions for "+p.ServiceAccountName] = p.Rules
	}
	for _, p := range bundle.CSV.Spec.InstallStrategy.StrategySpec.Permissions {
		rules["the CSV's permissions for "+p.ServiceAccountName] = append(rules["the CSV's permissions for "+p.ServiceAccountName], p.Rules...)
	}
	for where, rs := range rules {
		for _, r := range rs {
			switch {
			case slices.Contains(r.APIGroups, "*") || slices.Contains(r.Resources, "*") || slices.Contains(r.Verbs, "*"):
				t.Errorf("%s has a rule on *: %+v", where, r)
			case slices.Contains(r.Resources, "secrets"):
				t.Errorf("%s reads Secrets: %+v", where, r)
			case slices.Contains(r.Verbs, "escalate") || slices.Contains(r.Verbs, "impersonate"):
				t.Errorf("%s holds escalate or impersonate: %+v", where, r)
			case slices.Contains(r.Verbs, "bind") && !slices.Equal(r.ResourceNames, []string{rbac.OperandRole}):
				t.Errorf("%s may bind more than %s: %+v", where, rbac.OperandRole, r)
			}
		}
	}

	var operands *rbacv1.ClusterRole
	for _, obj := range bundle.Objects {
		if obj.GetKind() == "ClusterRole" && obj.GetName() == rbac.OperandRole {
			operands = &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, operands); err != nil {
				t.Fatal(err)
			}
		}
	}
	if operands == nil || operands.AggregationRule == nil {
		t.Fatalf("the bundle ships no ClusterRole %s with an aggregation rule", rbac.OperandRole)
	}
	want := []metav1.LabelSelector{
		{MatchLabels: rbac.OLMAdminRoleSelector()},
		{MatchLabels: map[string]string{rbac.OperandGrantLabel: "true"}},
	}
	got := operands.AggregationRule.ClusterRoleSelectors
	if len(got) != len(want) {
		t.Fatalf("%s aggregates %v, want %v", rbac.OperandRole, got, want)
	}
	for i := range want {
		if !maps.Equal(got[i].MatchLabels, want[i].MatchLabels) || len(got[i].MatchExpressions) > 0 {
			t.Errorf("%s's selector %d is %v, want %v", rbac.OperandRole, i, got[i], want[i])
		}
	}
	if len(operands.Rules) > 0 {
		t.Errorf("%s ships rules of its own: %v", rbac.OperandRole, operands.Rules)
	}
}

package rbac

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestSubjectOf(t *testing.T) {
	for _, tc := range []struct {
		username string
		want     rbacv1.Subject
		wantErr  bool
	}{
		{username: "system:serviceaccount:csv-cleaner:csv-cleaner", want: rbacv1.Subject{Kind: "ServiceAccount", Namespace: "csv-cleaner", Name: "csv-cleaner"}},
		{username: "system:serviceaccount:operators:csv-cleaner", want: rbacv1.Subject{Kind: "ServiceAccount", Namespace: "operators", Name: "csv-cleaner"}},
		{username: "alice", want: rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: "User", Name: "alice"}},
		// A malformed ServiceAccount name is an error, never a User that would bind someone else.
		{username: "system:serviceaccount:no-name", wantErr: true},
		{username: "", wantErr: true},
	} {
		t.Run(tc.username, func(t *testing.T) {
			got, err := SubjectOf(tc.username)
			if (err != nil) != tc.wantErr {
				t.Fatalf("SubjectOf(%q) error = %v, want error %v", tc.username, err, tc.wantErr)
			}
			if !tc.wantErr && got != tc.want {
				t.Errorf("SubjectOf(%q) = %+v, want %+v", tc.username, got, tc.want)
			}
		})
	}
}

func TestOperandBindingName(t *testing.T) {
	sa := rbacv1.Subject{Kind: "ServiceAccount", Namespace: "csv-cleaner", Name: "csv-cleaner"}
	other := rbacv1.Subject{Kind: "ServiceAccount", Namespace: "operators", Name: "csv-cleaner"}
	v1 := types.NamespacedName{Namespace: "csv-cleaner", Name: "csv-cleaner.v0.1.0"}
	v2 := types.NamespacedName{Namespace: "csv-cleaner", Name: "csv-cleaner.v0.2.0"}
	names := map[string]string{
		"deploy":          OperandBindingName(OperandRole, sa, types.NamespacedName{}),
		"olm v1":          OperandBindingName(OperandRole, sa, v1),
		"olm v2":          OperandBindingName(OperandRole, sa, v2),
		"other namespace": OperandBindingName(OperandRole, other, types.NamespacedName{}),
		"long role":       OperandBindingName(strings.Repeat("r", 200), sa, v1),
	}
	seen := map[string]string{}
	for what, name := range names {
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 || len(name) > 63 {
			t.Errorf("%s: name %q is not a short DNS subdomain: %v", what, name, errs)
		}
		if prev, ok := seen[name]; ok {
			t.Errorf("%s and %s share the binding name %q", what, prev, name)
		}
		seen[name] = what
	}
	if again := OperandBindingName(OperandRole, sa, v1); again != names["olm v1"] {
		t.Errorf("the name changed between calls: %q, then %q", names["olm v1"], again)
	}
	if !strings.HasPrefix(names["deploy"], OperandRole+"-") {
		t.Errorf("name %q does not start with the role's name", names["deploy"])
	}
}

func TestHowToGrantNamesTheLabels(t *testing.T) {
	msg := HowToGrant("gadgets.example.com")
	for _, want := range []string{"rbac.authorization.k8s.io/aggregate-to-admin=true", "olm.managed=true", OperandGrantLabel + "=true", "list, delete, patch on gadgets.example.com"} {
		if !strings.Contains(msg, want) {
			t.Errorf("HowToGrant does not say %q: %s", want, msg)
		}
	}
}

package decide

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

func TestDecideTargets(t *testing.T) {
	csv := types.NamespacedName{Namespace: "op", Name: "op.v1"}
	tests := []struct {
		name string
		in   TargetsInput
		// want lists the namespaces, [""] for every namespace; nil when Blocked.
		want []string
		// says is in the Blocked message: what was found, quoted.
		says string
	}{
		{name: "status names namespaces", in: TargetsInput{Status: []string{"a", "b"}}, want: []string{"a", "b"}},
		{name: "status exactly [\"\"] is every namespace", in: TargetsInput{Status: []string{""}}, want: []string{""}},
		{name: "annotation exactly \"\" is every namespace", in: TargetsInput{Annotation: "", HasAnnotation: true}, want: []string{""}},
		{name: "annotation names namespaces, spaces ignored", in: TargetsInput{Annotation: "a, b", HasAnnotation: true}, want: []string{"a", "b"}},
		{name: "both every namespace", in: TargetsInput{Status: []string{""}, Annotation: "", HasAnnotation: true}, want: []string{""}},
		{name: "both agree", in: TargetsInput{Status: []string{"a", "b"}, Annotation: "b,a", HasAnnotation: true}, want: []string{"a", "b"}},
		{name: "two lists narrow to what both name", in: TargetsInput{Status: []string{"a", "b"}, Annotation: "b,c", HasAnnotation: true}, want: []string{"b"}},

		{name: "blank annotation", in: TargetsInput{Annotation: " ", HasAnnotation: true}, says: `annotation is " ", which has a blank name`},
		{name: "blank name in the annotation", in: TargetsInput{Annotation: "a,,b", HasAnnotation: true}, says: `annotation is "a,,b", which has a blank name`},
		{name: "\"\" beside names in status", in: TargetsInput{Status: []string{"", "ns-a"}}, says: `status.namespaces ["" "ns-a"], which has "" (every namespace) beside namespace names`},
		{name: "blank name in status", in: TargetsInput{Status: []string{" "}}, says: `status.namespaces [" "]`},
		{name: "not a namespace name", in: TargetsInput{Annotation: "Team_A", HasAnnotation: true}, says: `"Team_A" is no namespace name`},
		{name: "status every namespace, annotation one", in: TargetsInput{Status: []string{""}, Annotation: "ns-a", HasAnnotation: true}, says: `status.namespaces [""] but the CSV's olm.targetNamespaces annotation is "ns-a": one says every namespace`},
		{name: "status one, annotation every namespace", in: TargetsInput{Status: []string{"ns-a"}, Annotation: "", HasAnnotation: true}, says: "one says every namespace, the other names namespaces"},
		{name: "nothing in common", in: TargetsInput{Status: []string{"a"}, Annotation: "b", HasAnnotation: true}, says: "they name no namespace in common"},
		{name: "no OperatorGroup named, no annotation", in: TargetsInput{}, says: "the CSV names no OperatorGroup (annotation olm.operatorGroup) and has no olm.targetNamespaces annotation"},
		{name: "neither", in: TargetsInput{OperatorGroup: "og"}, says: `its OperatorGroup "og" has no status.namespaces and the CSV has no olm.targetNamespaces annotation`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.CSV = csv
			got, problem := DecideTargets(tt.in)
			if tt.want == nil {
				if problem == nil {
					t.Fatalf("DecideTargets = %v, want Blocked", keys(got))
				}
				if problem.Reason != cleanupv1alpha1.BlockedTargetNamespacesUnknown || !strings.Contains(problem.Message, tt.says) {
					t.Errorf("Blocked %s: %s; want %s saying %s", problem.Reason, problem.Message, cleanupv1alpha1.BlockedTargetNamespacesUnknown, tt.says)
				}
				return
			}
			if problem != nil {
				t.Fatalf("Blocked: %s", problem.Message)
			}
			if !slices.Equal(keys(got), tt.want) {
				t.Errorf("DecideTargets = %q, want %q", keys(got), tt.want)
			}
		})
	}
}

func TestNamespaceSetNeverWidens(t *testing.T) {
	mixed := NewNamespaceSet([]string{"", "a"})
	if mixed.All() || mixed.Has("b") || !mixed.Has("a") {
		t.Errorf(`a set of "" beside "a" covers %v every namespace, "b" %v, "a" %v; want only "a"`, mixed.All(), mixed.Has("b"), mixed.Has("a"))
	}
	if !AllNamespaces().Has("anything") {
		t.Error("AllNamespaces does not cover a namespace")
	}
}

func keys(s NamespaceSet) []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestDecideOperatorGroups(t *testing.T) {
	csv := types.NamespacedName{Namespace: "op", Name: "op.v1"}
	tests := []struct {
		name   string
		groups []OperatorGroupView
		want   string // the Blocked reason, "" when nothing blocks
		says   string
	}{
		{"none: DecideTargets judges", nil, "", ""},
		{"one in sync", []OperatorGroupView{{Name: "og", Status: []string{"b", "a"}, Expected: []string{"a", "b"}}}, "", ""},
		{"every namespace, in sync", []OperatorGroupView{{Name: "og", Status: []string{""}, Expected: []string{""}}}, "", ""},
		{"no status yet: DecideTargets judges", []OperatorGroupView{{Name: "og", Expected: []string{"a"}}}, "", ""},
		{"a malformed status: DecideTargets judges", []OperatorGroupView{{Name: "og", Status: []string{"", "a"}, Expected: []string{"a"}}}, "", ""},
		{"two groups", []OperatorGroupView{{Name: "og-b", Status: []string{"a"}, Expected: []string{"a"}}, {Name: "og-a", Status: []string{"a"}, Expected: []string{"a"}}},
			cleanupv1alpha1.BlockedTooManyOperatorGroups, "namespace op holds 2 OperatorGroups (og-a, og-b)"},
		{"status lags a new target", []OperatorGroupView{{Name: "og", Status: []string{"a"}, Expected: []string{"a", "b"}}},
			cleanupv1alpha1.BlockedOperatorGroupOutOfSync, `OperatorGroup op/og has status.namespaces ["a"] but its spec names ["a" "b"]`},
		{"status says every namespace, the spec one", []OperatorGroupView{{Name: "og", Status: []string{""}, Expected: []string{"a"}}},
			cleanupv1alpha1.BlockedOperatorGroupOutOfSync, "OLM has not caught up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DecideOperatorGroups(csv, tt.groups)
			switch {
			case tt.want == "" && p != nil:
				t.Errorf("Blocked %s: %s; want nothing blocking", p.Reason, p.Message)
			case tt.want != "" && (p == nil || p.Reason != tt.want || !strings.Contains(p.Message, tt.says)):
				t.Errorf("DecideOperatorGroups = %+v; want %s saying %s", p, tt.want, tt.says)
			}
		})
	}
}

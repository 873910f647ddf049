package undoplan

import (
	"slices"
	"strings"
	"testing"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// TestSelect narrows an undo to the custom resources picked and what they
// owned, transitively, and refuses a name that matches nothing.
func TestSelect(t *testing.T) {
	db1 := decide.Held{Group: "example.com", Kind: "Database", Resource: "databases", Namespace: "a", Name: "db1"}
	db2 := decide.Held{Group: "example.com", Kind: "Database", Resource: "databases", Namespace: "a", Name: "db2"}
	crd := decide.Held{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Resource: "customresourcedefinitions", Name: "databases.example.com"}
	sts1 := decide.Held{Group: "apps", Kind: "StatefulSet", Resource: "statefulsets", Namespace: "a", Name: "db1"}
	claim1 := decide.Held{Kind: "PersistentVolumeClaim", Resource: "persistentvolumeclaims", Namespace: "a", Name: "data-db1-0"}
	secret2 := decide.Held{Kind: "Secret", Resource: "secrets", Namespace: "a", Name: "db2-password"}
	shared := decide.Held{Kind: "ConfigMap", Resource: "configmaps", Namespace: "a", Name: "shared"}
	ref := func(uid string) metav1.OwnerReference { return metav1.OwnerReference{UID: typesUID(uid)} }
	origins := []decide.Origin{
		{Object: db1, UID: "db1", Labels: map[string]string{"tier": "gold"}},
		{Object: db2, UID: "db2", Labels: map[string]string{"tier": "silver"}},
		{Object: sts1, UID: "sts1", Owners: []metav1.OwnerReference{ref("db1")}},
		{Object: claim1, UID: "claim1", Owners: []metav1.OwnerReference{ref("sts1")}},
		{Object: secret2, UID: "secret2", Owners: []metav1.OwnerReference{ref("db2")}},
		{Object: shared, UID: "shared", Owners: []metav1.OwnerReference{ref("db1"), ref("db2")}},
	}
	restorable := []decide.Held{crd, db1, db2, sts1, claim1, secret2, shared}
	in := SelectInput{Restorable: restorable, Deleted: []decide.Held{db1, db2, crd}, Origins: origins}
	gold, _ := labels.Parse("tier=gold")
	none, _ := labels.Parse("tier=bronze")
	tests := []struct {
		name  string
		sel   UndoSelection
		want  []decide.Held
		error string
	}{
		{name: "everything", want: restorable},
		{name: "one by Kind/namespace/name: its chain and what it shares, and its CRD", sel: UndoSelection{Only: []ObjectName{{Kind: "Database", Namespace: "a", Name: "db1"}}},
			want: []decide.Held{crd, db1, sts1, claim1, shared}},
		{name: "by plural.group", sel: UndoSelection{Only: []ObjectName{{Kind: "databases.example.com", Namespace: "a", Name: "db2"}}},
			want: []decide.Held{crd, db2, secret2, shared}},
		{name: "by labels", sel: UndoSelection{Selector: gold}, want: []decide.Held{crd, db1, sts1, claim1, shared}},
		{name: "a name that matches nothing restores nothing", sel: UndoSelection{Only: []ObjectName{{Kind: "Database", Namespace: "a", Name: "db3"}}},
			error: "no custom resource Database/a/db3"},
		{name: "a dependent is no custom resource to pick", sel: UndoSelection{Only: []ObjectName{{Kind: "Secret", Namespace: "a", Name: "db2-password"}}},
			error: "no custom resource Secret/a/db2-password"},
		{name: "labels that match nothing", sel: UndoSelection{Selector: none}, error: "had labels matching tier=bronze"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := in
			in.Selection = tt.sel
			got, err := Select(in)
			if tt.error != "" {
				if err == nil || !strings.Contains(err.Error(), tt.error) {
					t.Fatalf("error %v, want %q", err, tt.error)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestParseObjectName reads KIND/NAMESPACE/NAME and KIND/NAME, nothing else.
func TestParseObjectName(t *testing.T) {
	for in, want := range map[string]ObjectName{
		"Database/a/db1":            {Kind: "Database", Namespace: "a", Name: "db1"},
		"clusterthings.example/ct1": {Kind: "clusterthings.example", Name: "ct1"},
	} {
		if got, err := ParseObjectName(in); err != nil || got != want {
			t.Errorf("%q: got %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "db1", "Database//db1", "/a/db1", "Database/a/db1/x"} {
		if _, err := ParseObjectName(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func typesUID(s string) types.UID { return types.UID(s) }

package undo

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/undoplan"
)

// TestSameSpec: a run finds the Undo in flight of the same spec as the API
// server returns it: a selector whose empty lists came back absent, --only
// names in another order, the default Velero namespace spelled out.
func TestSameSpec(t *testing.T) {
	owner := decide.Owner{Kind: decide.KindCSV, Namespace: "ops", Name: "op.v1"}
	sel, err := labels.Parse("tier=db")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Owner: owner, Selection: undoplan.UndoSelection{Selector: sel,
		Only: []undoplan.ObjectName{{Kind: "Widget", Namespace: "a", Name: "w1"}, {Kind: "Widget", Namespace: "a", Name: "w2"}}}}
	asked, err := SpecOf(o)
	if err != nil {
		t.Fatal(err)
	}
	if asked.Selector.MatchExpressions == nil {
		t.Fatalf("the parsed selector %+v: its empty list is not what the test is about", asked.Selector)
	}
	stored := asked
	stored.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"}}
	stored.Only = []string{asked.Only[1], asked.Only[0]}
	for _, tt := range []struct {
		name string
		b    cleanupv1alpha1.UndoSpec
		same bool
	}{
		{"as the API server returns it", stored, true},
		{"withoutOperator, which the undo ignores", func() cleanupv1alpha1.UndoSpec { s := stored; s.WithoutOperator = true; return s }(), true},
		{"another selector", func() cleanupv1alpha1.UndoSpec {
			s := stored
			s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}}
			return s
		}(), false},
		{"another name", func() cleanupv1alpha1.UndoSpec { s := stored; s.Only = []string{asked.Only[0]}; return s }(), false},
		{"beside the operator", func() cleanupv1alpha1.UndoSpec { s := stored; s.BesideOperator = true; return s }(), false},
		{"another Velero namespace", func() cleanupv1alpha1.UndoSpec { s := stored; s.VeleroNamespace = "backups"; return s }(), false},
	} {
		if got := sameSpec(asked, tt.b); got != tt.same {
			t.Errorf("%s: sameSpec = %v, want %v", tt.name, got, tt.same)
		}
	}
	none := cleanupv1alpha1.UndoSpec{Uninstall: asked.Uninstall, Selector: &metav1.LabelSelector{}}
	if !sameSpec(none, cleanupv1alpha1.UndoSpec{Uninstall: asked.Uninstall}) {
		t.Error("an empty selector and none select the same")
	}
}

package extension

import (
	"errors"
	"strings"
	"testing"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
)

func TestForegroundNote(t *testing.T) {
	blocked := &plan.Problem{Reason: cleanupv1alpha1.BlockedOperandsRemaining, Message: "4 operands still exist"}
	other := errors.New("connection refused")
	for _, tt := range []struct {
		name    string
		cascade plan.Cascade
		err     error
		want    string
	}{
		{"a foreground cascade says what waits", plan.CascadeForeground, blocked, "4 operands still exist; the garbage collector is deleting their CRDs (--cascade=foreground)"},
		{"a background cascade as it was", plan.CascadeBackground, blocked, "4 operands still exist"},
		{"a failure that is no problem as it was", plan.CascadeForeground, other, "connection refused"},
		{"nothing", plan.CascadeForeground, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := foregroundNote(tt.cascade, tt.err)
			if got == nil && tt.want != "" || got != nil && !strings.HasPrefix(got.Error(), tt.want) && !strings.Contains(got.Error(), tt.want) {
				t.Errorf("foregroundNote = %v, want %q", got, tt.want)
			}
		})
	}
	if blocked.Message != "4 operands still exist" {
		t.Error("foregroundNote changed the problem it was given")
	}
}

func TestAboutToDo(t *testing.T) {
	scopes := []plan.CRDScope{{Name: "gadgets.example.com"}}
	for _, tt := range []struct {
		name    string
		targets plan.NamespaceSet
		s       plan.Settings
		want    []string
	}{
		{"defaults", plan.AllNamespaces(), plan.Settings{Operands: cleanupv1alpha1.Delete, CRDs: cleanupv1alpha1.Orphan},
			[]string{"deleting the custom resources in every namespace", "gadgets.example.com", "detaching them"}},
		{"a watch namespace, crds: Delete", plan.NewNamespaceSet([]string{"team-a"}), plan.Settings{Operands: cleanupv1alpha1.Delete, CRDs: cleanupv1alpha1.Delete},
			[]string{"in its watch namespace", "leaving them to the garbage collector"}},
		{"operands: Orphan", plan.AllNamespaces(), plan.Settings{Operands: cleanupv1alpha1.Orphan, CRDs: cleanupv1alpha1.Orphan},
			[]string{"keeping every custom resource (PolicyOrphan)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := aboutToDo(scopes, tt.targets, tt.s)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("aboutToDo = %q, want it to say %q", got, w)
				}
			}
		})
	}
}

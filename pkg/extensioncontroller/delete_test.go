package extensioncontroller

import (
	"errors"
	"strings"
	"testing"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide/olmv1"
)

func TestForegroundNote(t *testing.T) {
	blocked := &decide.Problem{Reason: cleanupv1alpha1.BlockedOperandsRemaining, Message: "4 operands still exist"}
	other := errors.New("connection refused")
	for _, tt := range []struct {
		name    string
		cascade olmv1.Cascade
		err     error
		want    string
	}{
		{"a foreground cascade says what waits", olmv1.CascadeForeground, blocked, "4 operands still exist; the garbage collector is deleting their CRDs (--cascade=foreground)"},
		{"a background cascade as it was", olmv1.CascadeBackground, blocked, "4 operands still exist"},
		{"a failure that is no problem as it was", olmv1.CascadeForeground, other, "connection refused"},
		{"nothing", olmv1.CascadeForeground, nil, ""},
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
	scopes := []decide.CRDScope{{Name: "gadgets.example.com"}}
	for _, tt := range []struct {
		name    string
		targets decide.NamespaceSet
		s       decide.Settings
		want    []string
	}{
		{"defaults", decide.AllNamespaces(), decide.Settings{Operands: cleanupv1alpha1.Delete, CRDs: cleanupv1alpha1.Orphan},
			[]string{"deleting the custom resources in every namespace", "gadgets.example.com", "detaching them"}},
		{"a watch namespace, crds: Delete", decide.NewNamespaceSet([]string{"team-a"}), decide.Settings{Operands: cleanupv1alpha1.Delete, CRDs: cleanupv1alpha1.Delete},
			[]string{"in its watch namespace", "leaving them to the garbage collector"}},
		{"operands: Orphan", decide.AllNamespaces(), decide.Settings{Operands: cleanupv1alpha1.Orphan, CRDs: cleanupv1alpha1.Orphan},
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

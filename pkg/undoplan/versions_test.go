package undoplan

import (
	"strings"
	"testing"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// TestUnserved leaves out of an undo's Restore the custom resources the
// Backup holds at a version their CRD no longer serves, and only them.
func TestUnserved(t *testing.T) {
	widget := decide.Held{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: "a", Name: "w1"}
	secret := decide.Held{Kind: "Secret", Resource: "secrets", Namespace: "a", Name: "w1-password"}
	crd := decide.Held{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Resource: "customresourcedefinitions", Name: "widgets.example.com"}
	versions := decide.BackedUpVersions(map[string][]string{"example.com/v1/Widget": {"a/w1"}, "v1/Secret": {"a/w1-password"},
		"apiextensions.k8s.io/v1/CustomResourceDefinition": {"widgets.example.com"}})
	if versions["Widget.example.com"] != "v1" || versions["Secret"] != "v1" {
		t.Fatalf("versions %v", versions)
	}
	tests := []struct {
		name    string
		missing []decide.Held
		served  map[string][]string
		want    string // the kind left out, "" for none
	}{
		{"the CRD still serves v1", []decide.Held{widget, secret}, map[string][]string{"Widget.example.com": {"v1", "v2"}}, ""},
		{"the CRD serves v2 alone", []decide.Held{widget, secret}, map[string][]string{"Widget.example.com": {"v2"}}, "Widget.example.com"},
		{"the Restore brings the CRD back itself", []decide.Held{crd, widget}, map[string][]string{"Widget.example.com": {"v2"}}, ""},
		{"no CRD there, and the Restore does not bring it back", []decide.Held{widget, secret}, map[string][]string{}, "Widget.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Unserved(UnservedInput{Missing: tt.missing, Versions: versions, Served: tt.served})
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("left out %v", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[tt.want], "version v1, which its CRD no longer serves (it serves v2)") && !strings.Contains(got[tt.want], "no CRD serves Widget.example.com")):
				t.Errorf("got %v, want %s left out", got, tt.want)
			}
		})
	}
}

// TestLeaveOutUnserved: what a Restore cannot bring back now is left out,
// and its row says why; a record without versions leaves out nothing.
func TestLeaveOutUnserved(t *testing.T) {
	widget := decide.Held{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: "a", Name: "w1"}
	secret := decide.Held{Kind: "Secret", Resource: "secrets", Namespace: "a", Name: "s1"}
	in := UnservedInput{Missing: []decide.Held{widget, secret}, Versions: map[string]string{"Widget.example.com": "v1"},
		Served: map[string][]string{"Widget.example.com": {"v2"}}}
	rows := []Row{{Object: widget, State: StateMissing}, {Object: secret, State: StateMissing}}
	if got := LeaveOutUnserved(in, rows); len(got) != 1 || got[0] != secret {
		t.Errorf("restorable now = %v, want the Secret alone", got)
	}
	if !strings.Contains(rows[0].Problem, "no longer serves") || rows[1].Problem != "" {
		t.Errorf("rows say %q and %q", rows[0].Problem, rows[1].Problem)
	}
	in.Versions = nil
	if got := LeaveOutUnserved(in, rows); len(got) != 2 {
		t.Errorf("without versions = %v, want both", got)
	}
}

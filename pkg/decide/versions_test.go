package decide

import (
	"strings"
	"testing"
)

// TestUnserved leaves out of an undo's Restore the custom resources the
// Backup holds at a version their CRD no longer serves, and only them.
func TestUnserved(t *testing.T) {
	widget := Held{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: "a", Name: "w1"}
	secret := Held{Kind: "Secret", Resource: "secrets", Namespace: "a", Name: "w1-password"}
	crd := Held{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Resource: "customresourcedefinitions", Name: "widgets.example.com"}
	versions := BackedUpVersions(map[string][]string{"example.com/v1/Widget": {"a/w1"}, "v1/Secret": {"a/w1-password"},
		"apiextensions.k8s.io/v1/CustomResourceDefinition": {"widgets.example.com"}})
	if versions["Widget.example.com"] != "v1" || versions["Secret"] != "v1" {
		t.Fatalf("versions %v", versions)
	}
	tests := []struct {
		name    string
		missing []Held
		served  map[string][]string
		want    string // the kind left out, "" for none
	}{
		{"the CRD still serves v1", []Held{widget, secret}, map[string][]string{"Widget.example.com": {"v1", "v2"}}, ""},
		{"the CRD serves v2 alone", []Held{widget, secret}, map[string][]string{"Widget.example.com": {"v2"}}, "Widget.example.com"},
		{"the Restore brings the CRD back itself", []Held{crd, widget}, map[string][]string{"Widget.example.com": {"v2"}}, ""},
		{"no CRD there: the reinstall check says so", []Held{widget}, map[string][]string{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Unserved(UnservedInput{Missing: tt.missing, Versions: versions, Served: tt.served})
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("left out %v", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[tt.want], "version v1, which its CRD no longer serves (it serves v2)")):
				t.Errorf("got %v, want %s left out", got, tt.want)
			}
		})
	}
}

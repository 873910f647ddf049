package dryrun

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// TestPlanJSONNamesItsOwner: a plan's JSON names a CSV under "csv" and a
// ClusterExtension under "clusterExtension", as every csv-cleaner printed
// it, and reads back the same owner; a plan as csv-cleaner printed it
// before the owner was a decide.Owner reads as its owner.
func TestPlanJSONNamesItsOwner(t *testing.T) {
	tests := []struct {
		name      string
		owner     decide.Owner
		want, not string
	}{
		{"a CSV", decide.Owner{Kind: decide.KindCSV, Namespace: "ops", Name: "db.v1"}, `"csv":{"namespace":"ops","name":"db.v1"}`, `"clusterExtension"`},
		{"a ClusterExtension", decide.Owner{Kind: decide.KindExtension, Name: "db"}, `"clusterExtension":"db"`, `"csv"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(&DryRun{Owner: tt.owner, Verdict: decide.VerdictUninstall, Items: []DryRunItem{}})
			if err != nil {
				t.Fatal(err)
			}
			if s := string(b); !strings.Contains(s, tt.want) || strings.Contains(s, tt.not) || !strings.Contains(s, `"verdict":"Uninstall"`) {
				t.Errorf("the plan's JSON is %s: want %s, its verdict, and no %s", s, tt.want, tt.not)
			}
			var back DryRun
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if back.Owner != tt.owner || back.Verdict != decide.VerdictUninstall {
				t.Errorf("read back as %+v (verdict %q), want %+v", back.Owner, back.Verdict, tt.owner)
			}
		})
	}
	var printed DryRun
	if err := json.Unmarshal([]byte(`{"csv":{"namespace":"ops","name":"db.v1"},"policy":"default","verdict":"Uninstall","message":"m","items":[]}`), &printed); err != nil {
		t.Fatal(err)
	}
	if want := (decide.Owner{Kind: decide.KindCSV, Namespace: "ops", Name: "db.v1"}); printed.Owner != want || printed.Policy != "default" {
		t.Errorf("a plan as printed before reads as %+v, policy %q; want %+v, default", printed.Owner, printed.Policy, want)
	}
}

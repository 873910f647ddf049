package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/undoplan"
)

// TestUndoJSON: the undo's JSON has the lower-case keys docs/backup.md
// names, as the plan's has.
func TestUndoJSON(t *testing.T) {
	u := &undoplan.Outcome{Backup: "velero/b1", From: "the uninstall's record", Restore: "b1-undo-1", RestorePhase: "Completed",
		Rows: []undoplan.Row{{Object: decide.Held{Kind: "Secret", Resource: "secrets", Namespace: "a", Name: "s"}, State: undoplan.StateRestored, Owners: []string{"Widget.example.com a/w"}}}}
	var buf bytes.Buffer
	if err := UndoJSON(&buf, u); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"backup", "from", "restore", "restorePhase", "rows"}; !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	for _, want := range []string{`"state": "restored"`, `"owners": [`, `"kind": "Secret"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, buf.String())
		}
	}
	if u.Missing() != 0 {
		t.Errorf("Missing = %d", u.Missing())
	}
	var table bytes.Buffer
	if err := UndoTable(&table, u); err != nil || !strings.Contains(table.String(), "1 restored, 0 present already, 0 missing") {
		t.Errorf("table (%v):\n%s", err, table.String())
	}
}

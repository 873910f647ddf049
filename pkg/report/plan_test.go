package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
)

func sample() *dryrun.DryRun {
	return &dryrun.DryRun{
		Owner: decide.Owner{Kind: decide.KindCSV, Namespace: "operators", Name: "my-operator.v1"}, Policy: "default",
		Verdict: "Incomplete", Message: "1 kind could not be read",
		Items: []decide.Item{
			{Action: decide.ActionDelete, Kind: "Widget.example.com", Namespace: "apps", Name: "w1", Reason: "Owned"},
			{Action: decide.ActionKeep, Kind: "ClusterRole", Name: "my-operator-role", Reason: "SharedWithCSV", Message: "another CSV owns it"},
			{Action: decide.ActionUpdate, Kind: "CustomResourceDefinition", Name: "widgets.example.com", Reason: "ConversionToNone"},
		},
		Unread:   []dryrun.Unread{{Kind: "Gadget.example.com", Reason: "ConversionFailed", Message: "connection refused"}},
		Refusals: []dryrun.Foreseen{{Kind: "Widget.example.com", Reason: "Forbidden", Message: "may not delete"}},
		Notes:    []string{"the identity csv-cleaner runs as was not found"},
	}
}

// TestTable prints every part a person reads: the subject, the verdict,
// one line per object, what could not be read, what would be refused,
// the notes and the totals.
func TestTable(t *testing.T) {
	var b bytes.Buffer
	if err := PlanTable(&b, sample()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"CSV:", "operators/my-operator.v1", "Policy:", "Verdict:", "Incomplete: 1 kind could not be read",
		"ACTION", "Delete", "apps", "w1", "Keep", "my-operator-role",
		"UNREAD", "Gadget.example.com", "ConversionFailed",
		"REFUSED", "Forbidden", "may not delete",
		"Note:", "ClusterRole my-operator-role: another CSV owns it", "the identity csv-cleaner runs as was not found",
		"1 to delete, 1 to keep, 1 to update, 1 kind unread",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "-  ") {
		t.Errorf("a cluster-scoped object's namespace is not shown as -:\n%s", out)
	}
}

func TestTableOfAClusterExtension(t *testing.T) {
	var b bytes.Buffer
	if err := PlanTable(&b, &dryrun.DryRun{Owner: decide.Owner{Kind: decide.KindExtension, Name: "my-extension"}, Verdict: "Unmanaged", Message: "no policy selects it"}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "ClusterExtension:") || strings.Contains(out, "CSV:") || strings.Contains(out, "ACTION") {
		t.Errorf("an extension's plan without items:\n%s", out)
	}
}

// TestJSON round-trips the dry run: a program reads what the table shows.
func TestJSON(t *testing.T) {
	var b bytes.Buffer
	if err := PlanJSON(&b, sample()); err != nil {
		t.Fatal(err)
	}
	var back dryrun.DryRun
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatalf("%v:\n%s", err, b.String())
	}
	if back.Verdict != "Incomplete" || len(back.Items) != 3 || len(back.Unread) != 1 || back.Items[0].Name != "w1" {
		t.Errorf("read back %+v", back)
	}
}

// TestTableOfABackup shows the Backup the run would make, and what it
// includes: every namespace said so, none shown as -.
func TestTableOfABackup(t *testing.T) {
	for _, tt := range []struct {
		namespaces []string
		want       string
	}{
		{[]string{decide.EveryNamespace}, "namespaces * (every namespace); resources widgets.example.com"},
		{[]string{"a", "b"}, "namespaces a,b; resources widgets.example.com"},
		{nil, "namespaces -; resources widgets.example.com"},
	} {
		var b bytes.Buffer
		dry := &dryrun.DryRun{Owner: decide.Owner{Kind: decide.KindExtension, Name: "my-extension"}, Verdict: "Uninstall", Items: []decide.Item{},
			Backup: &dryrun.BackupForeseen{Tool: "Velero", Namespace: "velero", Name: "csv-cleaner-x", Planned: 2, Namespaces: tt.namespaces, Resources: []string{"widgets.example.com"}}}
		if err := PlanTable(&b, dry); err != nil {
			t.Fatal(err)
		}
		if out := b.String(); !strings.Contains(out, "velero/csv-cleaner-x") || !strings.Contains(out, "2 objects, 0 dependents, 0 volumes' snapshots; "+tt.want) {
			t.Errorf("namespaces %v:\n%s", tt.namespaces, out)
		}
	}
}

// TestTableOfDependents lists the dependents and the volumes apart from the
// items, and counts them apart.
func TestTableOfDependents(t *testing.T) {
	claim := decide.Held{Kind: "PersistentVolumeClaim", Resource: "persistentvolumeclaims", Namespace: "a", Name: "data"}
	dry := &dryrun.DryRun{Owner: decide.Owner{Kind: decide.KindCSV, Namespace: "ops", Name: "db.v1"}, Verdict: "Uninstall",
		Items: []decide.Item{{Action: decide.ActionDelete, Kind: "Database.example.com", Namespace: "a", Name: "db", Reason: decide.DeleteOwnedOperand}},
		Dependents: []decide.Held{{Kind: "Secret", Resource: "secrets", Namespace: "a", Name: "db-password"}, claim,
			{Group: "example.com", Kind: "Snapshot", Resource: "snapshots", Namespace: "a", Name: "nightly"}},
		Volumes: []decide.Volume{{Claim: claim, VolumeName: "pv-1", Driver: "csi.example.com", SnapshotClass: "snap", Snapshot: true},
			{Claim: decide.Held{Kind: "PersistentVolumeClaim", Namespace: "a", Name: "scratch"}, Note: "not bound to a volume: no data to back up"}}}
	var b bytes.Buffer
	if err := PlanTable(&b, dry); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"DEPENDENT", "Secret", "a          db-password", "Snapshot.example.com", "VOLUME CLAIM", "a/data", "pv-1", "csi.example.com", "snapshot",
		"a/scratch", "not bound to a volume", "1 to delete, 0 to keep; 3 dependents deleted with them, 2 volumes"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

// TestTableOfUninstallMessage shows the operator author's words under the
// verdict, each of their lines in the value's column.
func TestTableOfUninstallMessage(t *testing.T) {
	dry := &dryrun.DryRun{Owner: decide.Owner{Kind: decide.KindCSV, Namespace: "ops", Name: "db.v1"}, Verdict: "Uninstall", Message: "CSV is being uninstalled",
		UninstallMessage: "Delete the Databases first.\nTheir volumes stay.\n"}
	var b bytes.Buffer
	if err := PlanTable(&b, dry); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Uninstall message:") })
	if i < 0 || i+1 >= len(lines) {
		t.Fatalf("no uninstall message:\n%s", b.String())
	}
	col := strings.Index(lines[i], "Delete the Databases first.")
	if col < 0 || strings.Index(lines[i+1], "Their volumes stay.") != col {
		t.Errorf("the message's lines are not in one column:\n%s", b.String())
	}
}

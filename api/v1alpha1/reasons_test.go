package v1alpha1

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestREADMEReasons checks the table of reasons of docs/policy.md (the
// policy and record reference the README links to) against
// SkipReasons, KeptReasons and BlockedReasons: every reason, where it
// shows, and its meaning, both ways.
func TestReasonsTable(t *testing.T) {
	raw, err := os.ReadFile("../../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "| reason | where | meaning |\n|---|---|---|\n")
	if !ok {
		t.Fatal("docs/policy.md has no table of reasons")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	row := regexp.MustCompile("^\\| `([A-Za-z]+)` \\| ([a-z]+)[^|]* \\| (.*) \\|$")
	inDocs := map[string]string{}
	for _, line := range strings.Split(table, "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("docs/policy.md row %q is not | `Reason` | where | meaning |", line)
			continue
		}
		inDocs[m[1]] = m[2]
		meaning := strings.ReplaceAll(m[3], "`", "")
		if !slices.ContainsFunc(append(append(slices.Clone(SkipReasons), KeptReasons...), BlockedReasons...), func(r Reason) bool {
			return r.Name == m[1] && strings.HasPrefix(meaning, r.Meaning)
		}) {
			t.Errorf("docs/policy.md row %s says %q, which is no reason of api/v1alpha1 with that meaning", m[1], meaning)
		}
	}
	for where, reasons := range map[string][]Reason{"skipped": SkipReasons, "kept": KeptReasons, "blocked": BlockedReasons} {
		for _, r := range reasons {
			if got, ok := inDocs[r.Name]; !ok || got != where {
				t.Errorf("reason %s (%s) is not in docs/policy.md's table as %s (found %q)", r.Name, r.Meaning, where, got)
			}
		}
	}
}

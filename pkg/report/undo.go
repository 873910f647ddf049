package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/csv-cleaner/csv-cleaner/pkg/undoplan"
)

// UndoJSON prints what an undo did for a program: its Outcome, indented.
func UndoJSON(w io.Writer, r *undoplan.Outcome) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("writing the undo's JSON: %w", err)
	}
	return nil
}

// UndoTable prints what an undo did for a person: the Backup, the Restore,
// then one line per object the uninstall destroyed, and the count of
// what came back and what did not.
func UndoTable(w io.Writer, r *undoplan.Outcome) error {
	t := newTable(w)
	printf := t.printf
	printf("Backup:\t%s (found from %s)\n", r.Backup, r.From)
	if r.Restore == "" {
		printf("Restore:\tnone: nothing the uninstall destroyed is missing\n")
	} else {
		attempt := ""
		if r.Attempt > 1 {
			attempt = fmt.Sprintf(", attempt %d", r.Attempt)
		}
		printf("Restore:\t%s (%s%s)\n", r.Restore, cmp.Or(r.RestorePhase, "not ended"), attempt)
	}
	printf("\nKIND\tNAMESPACE\tNAME\tSTATE\tVOLUME\tOWNERS\n")
	counts := map[string]int{}
	for _, row := range r.Rows {
		state := row.State
		if row.Problem != "" {
			state += ": " + row.Problem
		}
		counts[row.State]++
		printf("%s\t%s\t%s\t%s\t%s\t%s\n", row.Object.KindName(), cmp.Or(row.Object.Namespace, "-"), row.Object.Name, state, cmp.Or(row.Volume, "-"), owners(row))
	}
	printf("\n%d restored, %d present already, %d missing", counts[undoplan.StateRestored], counts[undoplan.StatePresent], counts[undoplan.StateMissing])
	if counts[undoplan.StateUnread] > 0 {
		printf(", %d not known (their kind could not be listed)", counts[undoplan.StateUnread])
	}
	if n := r.Missing() - counts[undoplan.StateMissing] - counts[undoplan.StateUnread]; n > 0 {
		printf(", %d restored with a problem", n)
	}
	printf("\n")
	return t.flush("the undo's table")
}

// owners says what the undo did with a row's owners: "linked to Kind
// ns/name", "left out Kind ns/name: why", or "-".
func owners(row undoplan.Row) string {
	var parts []string
	if len(row.Owners) > 0 {
		parts = append(parts, "linked to "+strings.Join(row.Owners, ", "))
	}
	if len(row.OwnersLeftOut) > 0 {
		parts = append(parts, "left out "+strings.Join(row.OwnersLeftOut, ", "))
	}
	return cmp.Or(strings.Join(parts, "; "), "-")
}

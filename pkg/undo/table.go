package undo

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Table prints what an undo did for a person: the Backup, the Restore,
// then one line per object the uninstall destroyed, and the count of
// what came back and what did not.
func Table(w io.Writer, r *Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	var err error
	printf := func(format string, args ...any) {
		if err == nil {
			_, err = fmt.Fprintf(tw, format, args...)
		}
	}
	printf("Backup:\t%s (found from %s)\n", r.Backup, r.From)
	if r.Restore == "" {
		printf("Restore:\tnone: nothing the uninstall destroyed is missing\n")
	} else {
		printf("Restore:\t%s (%s)\n", r.Restore, cmp.Or(r.RestorePhase, "not ended"))
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
	printf("\n%d restored, %d present already, %d missing", counts[StateRestored], counts[StatePresent], counts[StateMissing])
	if counts[StateUnread] > 0 {
		printf(", %d not known (their kind could not be listed)", counts[StateUnread])
	}
	if n := r.Missing() - counts[StateMissing] - counts[StateUnread]; n > 0 {
		printf(", %d restored with a problem", n)
	}
	printf("\n")
	if err == nil {
		err = tw.Flush()
	}
	if err != nil {
		return fmt.Errorf("writing the undo's table: %w", err)
	}
	return nil
}

// owners says what the undo did with a row's owners: "linked to Kind
// ns/name", "left out Kind ns/name: why", or "-".
func owners(row Row) string {
	var parts []string
	if len(row.Owners) > 0 {
		parts = append(parts, "linked to "+strings.Join(row.Owners, ", "))
	}
	if len(row.OwnersLeftOut) > 0 {
		parts = append(parts, "left out "+strings.Join(row.OwnersLeftOut, ", "))
	}
	return cmp.Or(strings.Join(parts, "; "), "-")
}

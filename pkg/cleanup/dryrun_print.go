package cleanup

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints a dry run for a person: the verdict, then one line per object.
func (d *DryRun) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "CSV:\t%s\n", d.CSV)
	if d.Policy != "" {
		fmt.Fprintf(tw, "Policy:\t%s\n", d.Policy)
	}
	verdict := d.Verdict
	if d.Reason != "" {
		verdict += " (" + d.Reason + ")"
	}
	fmt.Fprintf(tw, "Verdict:\t%s: %s\n", verdict, d.Message)
	if len(d.Items) > 0 {
		fmt.Fprintf(tw, "\nACTION\tKIND\tNAMESPACE\tNAME\tREASON\n")
		for _, it := range d.Items {
			ns := it.Namespace
			if ns == "" {
				ns = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", it.Action, it.Kind, ns, it.Name, it.Reason)
		}
	}
	fmt.Fprintf(tw, "\n%d to delete, %d to keep\n", d.Count(ActionDelete), d.Count(ActionKeep))
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the plan: %w", err)
	}
	return nil
}

// WriteJSON prints a dry run for a program.
func (d *DryRun) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return fmt.Errorf("writing the plan: %w", err)
	}
	return nil
}

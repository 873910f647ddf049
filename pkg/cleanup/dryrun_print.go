package cleanup

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
)

// WriteTable prints a dry run for a person: the verdict, then one line per object.
func (d *DryRun) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	var err error
	printf := func(format string, args ...any) {
		if err == nil {
			_, err = fmt.Fprintf(tw, format, args...)
		}
	}
	if d.ClusterExtension != "" {
		printf("ClusterExtension:\t%s\n", d.ClusterExtension)
	} else {
		printf("CSV:\t%s\n", d.CSV)
	}
	if d.Policy != "" {
		printf("Policy:\t%s\n", d.Policy)
	}
	verdict := d.Verdict
	if d.Reason != "" {
		verdict += " (" + d.Reason + ")"
	}
	printf("Verdict:\t%s: %s\n", verdict, d.Message)
	if len(d.Items) > 0 {
		printf("\nACTION\tKIND\tNAMESPACE\tNAME\tREASON\n")
		for _, it := range d.Items {
			ns := it.Namespace
			if ns == "" {
				ns = "-"
			}
			printf("%s\t%s\t%s\t%s\t%s\n", it.Action, it.Kind, ns, it.Name, it.Reason)
		}
	}
	if len(d.Refusals) > 0 {
		printf("\nREFUSED\tKIND\tOBJECT\tWHY\n")
		for _, f := range d.Refusals {
			object := f.Object
			if object == "" {
				object = "-"
			}
			printf("%s\t%s\t%s\t%s\n", f.Reason, f.Kind, object, f.Message)
		}
	}
	for _, n := range d.Notes {
		printf("\nNote:\t%s\n", n)
	}
	printf("\n%d to delete, %d to keep\n", d.Count(plan.ActionDelete), d.Count(plan.ActionKeep))
	if err == nil {
		err = tw.Flush()
	}
	if err != nil {
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

package planprint

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// Table prints a dry run for a person: the verdict, then one line per object.
func Table(w io.Writer, d *cleanup.DryRun) error {
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
	if d.UninstallMessage != "" {
		printf("Uninstall message:\t%s\n", strings.ReplaceAll(strings.TrimSpace(d.UninstallMessage), "\n", "\n\t"))
	}
	if len(d.Items) > 0 {
		printf("\nACTION\tKIND\tNAMESPACE\tNAME\tREASON\n")
		for _, it := range d.Items {
			printf("%s\t%s\t%s\t%s\t%s\n", it.Action, it.Kind, cmp.Or(it.Namespace, "-"), it.Name, it.Reason)
		}
	}
	if len(d.Dependents) > 0 {
		printf("\nDEPENDENT\tNAMESPACE\tNAME\t(deleted by the garbage collector with what the uninstall deletes)\n")
		for _, h := range d.Dependents {
			printf("%s\t%s\t%s\t\n", h.KindName(), cmp.Or(h.Namespace, "-"), h.Name)
		}
	}
	if len(d.Volumes) > 0 {
		printf("\nVOLUME CLAIM\tVOLUME\tDRIVER\tSNAPSHOT CLASS\tDATA\n")
		for _, v := range d.Volumes {
			data := "snapshot"
			if !v.Snapshot {
				data = v.Note
			}
			printf("%s\t%s\t%s\t%s\t%s\n", path(v.Claim.Namespace, v.Claim.Name), cmp.Or(v.VolumeName, "-"), cmp.Or(v.Driver, "-"), cmp.Or(v.SnapshotClass, "-"), data)
		}
	}
	if len(d.Unread) > 0 {
		printf("\nUNREAD\tREASON\tWHY\n")
		for _, u := range d.Unread {
			printf("%s\t%s\t%s\n", u.Kind, u.Reason, u.Message)
		}
	}
	if len(d.UnreadDependents) > 0 {
		printf("\nNOT READ (WARNING)\tREASON\tWHERE\tCONCERNS\tWHY\n")
		for _, u := range d.UnreadDependents {
			printf("%s\t%s\t%s\t%s\t%s\n", u.Resource, u.Reason, places(u), yesNo(u.Concerns), u.Message)
		}
	}
	if len(d.Refusals) > 0 {
		printf("\nREFUSED\tKIND\tOBJECT\tWHY\n")
		for _, f := range d.Refusals {
			printf("%s\t%s\t%s\t%s\n", f.Reason, f.Kind, cmp.Or(f.Object, "-"), f.Message)
		}
	}
	for _, it := range d.Items {
		if it.Message != "" {
			printf("\nNote:\t%s %s %s: %s\n", it.Action, it.Kind, path(it.Namespace, it.Name), it.Message)
		}
	}
	if b := d.Backup; b != nil {
		printf("\nBackup:\t%s %s: %s\n", b.Tool, cmp.Or(path(b.Namespace, b.Name), "-"), b.Message)
		if len(b.Resources) > 0 {
			printf("\t%d objects, %d dependents, %d volumes' snapshots; namespaces %s; resources %s\n", b.Planned, b.Dependents, b.Volumes, namespaceList(b.Namespaces), strings.Join(b.Resources, ","))
		}
	}
	for _, n := range d.Notes {
		printf("\nNote:\t%s\n", n)
	}
	printf("\n%d to delete, %d to keep", d.Count(decide.ActionDelete), d.Count(decide.ActionKeep))
	if len(d.Dependents) > 0 || len(d.Volumes) > 0 {
		printf("; %d dependents deleted with them, %d volumes", len(d.Dependents), len(d.Volumes))
	}
	if n := d.Count(decide.ActionUpdate); n > 0 {
		printf(", %d to update", n)
	}
	if len(d.Unread) > 0 {
		printf(", %s unread", kinds(len(d.Unread)))
	}
	if len(d.UnreadDependents) > 0 {
		printf("; %s not read where dependents could be", kinds(len(d.UnreadDependents)))
	}
	printf("\n")
	if err == nil {
		err = tw.Flush()
	}
	if err != nil {
		return fmt.Errorf("writing the plan: %w", err)
	}
	return nil
}

// JSON prints a dry run for a program.
func JSON(w io.Writer, d *cleanup.DryRun) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return fmt.Errorf("writing the plan: %w", err)
	}
	return nil
}

// path is namespace/name, or name for a cluster-scoped object.
func path(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// places names where objects of u nobody could read are: "*" anywhere,
// "-" nowhere (every one was read at the version it is stored at),
// "(cluster)" for the cluster scope.
func places(u decide.UnreadKind) string {
	switch {
	case u.Anywhere:
		return "*"
	case len(u.Namespaces) == 0:
		return "-"
	}
	out := make([]string, len(u.Namespaces))
	for i, n := range u.Namespaces {
		out[i] = cmp.Or(n, "(cluster)")
	}
	return strings.Join(out, ",")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// kinds counts kinds in words.
func kinds(n int) string {
	if n == 1 {
		return "1 kind"
	}
	return fmt.Sprintf("%d kinds", n)
}

// namespaceList names a Backup's namespaces for a person: "-" for none
// (every object cluster-scoped), "* (every namespace)" for every one.
func namespaceList(ns []string) string {
	switch {
	case len(ns) == 0:
		return "-"
	case slices.Equal(ns, []string{decide.EveryNamespace}):
		return decide.EveryNamespace + " (every namespace)"
	}
	return strings.Join(ns, ",")
}

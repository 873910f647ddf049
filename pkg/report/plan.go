package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
)

// PlanTable prints a dry run for a person: the verdict, then one line per object.
func PlanTable(w io.Writer, d *dryrun.DryRun) error {
	t := newTable(w)
	planHead(t, d)
	planObjects(t, d)
	planProblems(t, d)
	if b := d.Backup; b != nil {
		t.printf("\nBackup:\t%s %s: %s\n", b.Tool, cmp.Or(path(b.Namespace, b.Name), "-"), b.Message)
		if len(b.Resources) > 0 {
			t.printf("\t%d objects, %d dependents, %d volumes' snapshots; namespaces %s; resources %s\n", b.Planned, b.Dependents, b.Volumes, namespaceList(b.Namespaces), strings.Join(b.Resources, ","))
		}
		if b.Expected != "" {
			t.printf("\t%s\n", b.Expected)
		}
	}
	for _, n := range d.Notes {
		t.printf("\nNote:\t%s\n", n)
	}
	planTotals(t, d)
	return t.flush("the plan")
}

// planHead prints what the plan is of, its policy and its verdict.
func planHead(t *table, d *dryrun.DryRun) {
	if d.Owner.Extension() {
		t.printf("ClusterExtension:\t%s\n", d.Owner.Name)
	} else {
		t.printf("CSV:\t%s/%s\n", d.Owner.Namespace, d.Owner.Name)
	}
	if d.Policy != "" {
		t.printf("Policy:\t%s\n", d.Policy)
	}
	verdict := d.Verdict
	if d.Reason != "" {
		verdict += " (" + d.Reason + ")"
	}
	t.printf("Verdict:\t%s: %s\n", verdict, d.Message)
	if d.UninstallMessage != "" {
		t.printf("Uninstall message:\t%s\n", strings.ReplaceAll(strings.TrimSpace(d.UninstallMessage), "\n", "\n\t"))
	}
}

// planObjects prints what the uninstall deletes and keeps, the dependents
// deleted with it and their volumes.
func planObjects(t *table, d *dryrun.DryRun) {
	if len(d.Items) > 0 {
		t.printf("\nACTION\tKIND\tNAMESPACE\tNAME\tREASON\n")
		for _, it := range d.Items {
			t.printf("%s\t%s\t%s\t%s\t%s\n", it.Action, it.Kind, cmp.Or(it.Namespace, "-"), it.Name, it.Reason)
		}
	}
	if len(d.Dependents) > 0 {
		t.printf("\nDEPENDENT\tNAMESPACE\tNAME\t(deleted by the garbage collector with what the uninstall deletes)\n")
		for _, h := range d.Dependents {
			t.printf("%s\t%s\t%s\t\n", h.KindName(), cmp.Or(h.Namespace, "-"), h.Name)
		}
	}
	if len(d.Volumes) > 0 {
		t.printf("\nVOLUME CLAIM\tVOLUME\tDRIVER\tSNAPSHOT CLASS\tDATA\n")
		for _, v := range d.Volumes {
			data := "snapshot"
			if !v.Snapshot {
				data = v.Note
			}
			t.printf("%s\t%s\t%s\t%s\t%s\n", path(v.Claim.Namespace, v.Claim.Name), cmp.Or(v.VolumeName, "-"), cmp.Or(v.Driver, "-"), cmp.Or(v.SnapshotClass, "-"), data)
		}
	}
}

// planProblems prints what the plan could not read, what the API server
// would refuse, and the items' notes.
func planProblems(t *table, d *dryrun.DryRun) {
	if len(d.Unread) > 0 {
		t.printf("\nUNREAD\tREASON\tWHY\n")
		for _, u := range d.Unread {
			t.printf("%s\t%s\t%s\n", u.Kind, u.Reason, u.Message)
		}
	}
	if len(d.UnreadDependents) > 0 {
		t.printf("\nNOT READ (WARNING)\tREASON\tWHERE\tCONCERNS\tWHY\n")
		for _, u := range d.UnreadDependents {
			t.printf("%s\t%s\t%s\t%s\t%s\n", u.Resource, u.Reason, places(u), yesNo(u.Concerns), u.Message)
		}
	}
	if len(d.Refusals) > 0 {
		t.printf("\nREFUSED\tKIND\tOBJECT\tWHY\n")
		for _, f := range d.Refusals {
			t.printf("%s\t%s\t%s\t%s\n", f.Reason, f.Kind, cmp.Or(f.Object, "-"), f.Message)
		}
	}
	for _, it := range d.Items {
		if it.Message != "" {
			t.printf("\nNote:\t%s %s %s: %s\n", it.Action, it.Kind, path(it.Namespace, it.Name), it.Message)
		}
	}
}

// planTotals prints the plan's counts.
func planTotals(t *table, d *dryrun.DryRun) {
	t.printf("\n%d to delete, %d to keep", d.Count(decide.ActionDelete), d.Count(decide.ActionKeep))
	if len(d.Dependents) > 0 || len(d.Volumes) > 0 {
		t.printf("; %d dependents deleted with them, %d volumes", len(d.Dependents), len(d.Volumes))
	}
	if n := d.Count(decide.ActionUpdate); n > 0 {
		t.printf(", %d to update", n)
	}
	if len(d.Unread) > 0 {
		t.printf(", %s unread", kinds(len(d.Unread)))
	}
	if len(d.UnreadDependents) > 0 {
		t.printf("; %s not read where dependents could be", kinds(len(d.UnreadDependents)))
	}
	t.printf("\n")
}

// PlanJSON prints a dry run for a program.
func PlanJSON(w io.Writer, d *dryrun.DryRun) error {
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

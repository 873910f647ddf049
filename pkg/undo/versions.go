package undo

import (
	"slices"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// restorableNow are the objects of missing a Velero Restore can bring back
// now: those of a kind the Backup holds at a version its CRD no longer
// serves (as inv read it) are left out (decide.Unserved), and their rows
// say why.
func restorableNow(d *velero.Destroyed, inv *inventory, missing []decide.Held, rows []Row) []decide.Held {
	if len(d.Versions) == 0 || len(missing) == 0 {
		return missing // a record made before the versions were kept
	}
	unserved := decide.Unserved(decide.UnservedInput{Missing: missing, Versions: d.Versions, Served: inv.served})
	if len(unserved) == 0 {
		return missing
	}
	for i := range rows {
		if why := unserved[rows[i].Object.Kind+"."+rows[i].Object.Group]; why != "" && rows[i].State == StateMissing {
			rows[i].Problem = "not restored: " + why
		}
	}
	return slices.DeleteFunc(slices.Clone(missing), func(h decide.Held) bool { return unserved[h.Kind+"."+h.Group] != "" })
}

package undoplan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// UnservedInput is what Unserved reads.
type UnservedInput struct {
	// Missing are what an undo would restore.
	Missing []decide.Held
	// Versions are the versions the Backup holds each kind at (decide.BackedUpVersions).
	Versions map[string]string
	// Served are the versions each custom resource's CRD serves now
	// (Kind.group); a kind absent from it has no CRD there.
	Served map[string][]string
}

// Unserved decides which kinds of Missing an undo cannot restore: a custom
// resource the Backup holds at a version its CRD no longer serves, which a
// Velero Restore would wait on for good (docs/backup.md, "Versions"). It
// returns why, by kind (Kind.group); and a custom resource whose CRD is
// not there and that the same Restore does not bring back (Velero would
// fail it). A kind of Kubernetes' own, and one whose version is not known,
// are not judged.
func Unserved(in UnservedInput) map[string]string {
	restoredCRDs := map[string]bool{}
	for _, h := range in.Missing {
		if h.Kind == "CustomResourceDefinition" {
			restoredCRDs[h.Name] = true
		}
	}
	out := map[string]string{}
	for _, h := range in.Missing {
		key := h.KindKey()
		version, known := in.Versions[key]
		served, crd := in.Served[key]
		if !known || decide.BuiltInGroup(h.Group) || restoredCRDs[h.Resource+"."+h.Group] || crd && slices.Contains(served, version) {
			continue
		}
		if _, said := out[key]; said {
			continue
		}
		if !crd {
			out[key] = fmt.Sprintf("no CRD serves %s, and the Backup does not hold its CRD %s.%s (the uninstall kept it, and it was deleted since): install the operator's CRDs again without running it (its Deployment scaled to zero), then undo again",
				key, h.Resource, h.Group)
			continue
		}
		out[key] = fmt.Sprintf("the Backup holds %s at version %s, which its CRD no longer serves (it serves %s): a Velero Restore of it would wait for good; serve %s again in the CRD (spec.versions, with a conversion that works) for the undo, or restore it by hand",
			key, version, servedList(served), version)
	}
	return out
}

// servedList names versions for a person.
func servedList(vs []string) string {
	if len(vs) == 0 {
		return "none"
	}
	return strings.Join(vs, ", ")
}

// LeaveOutUnserved are the objects of in.Missing a Velero Restore can bring
// back now: those of a kind Unserved judges are left out, and their rows
// (still missing) say why.
func LeaveOutUnserved(in UnservedInput, rows []Row) []decide.Held {
	if len(in.Versions) == 0 || len(in.Missing) == 0 {
		return in.Missing // a record made before the versions were kept
	}
	unserved := Unserved(in)
	if len(unserved) == 0 {
		return in.Missing
	}
	for i := range rows {
		if why := unserved[rows[i].Object.Kind+"."+rows[i].Object.Group]; why != "" && rows[i].State == StateMissing {
			rows[i].Problem = "not restored: " + why
		}
	}
	return slices.DeleteFunc(slices.Clone(in.Missing), func(h decide.Held) bool { return unserved[h.Kind+"."+h.Group] != "" })
}

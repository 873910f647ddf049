package decide

import (
	"fmt"
	"slices"
	"strings"
)

// BackedUpVersions are the versions a Backup holds each kind at (Kind.group,
// the Kind alone for the core group), read from its resource list, whose
// keys are group/version/Kind (version/Kind for the core group).
func BackedUpVersions(list map[string][]string) map[string]string {
	out := map[string]string{}
	for key := range list {
		parts := strings.Split(key, "/")
		switch len(parts) {
		case 2:
			out[parts[1]] = parts[0]
		case 3:
			out[parts[2]+"."+parts[0]] = parts[1]
		}
	}
	return out
}

// kindKey is a Held's kind as BackedUpVersions keys it.
func (d Held) kindKey() string {
	if d.Group == "" {
		return d.Kind
	}
	return d.Kind + "." + d.Group
}

// UnservedInput is what Unserved reads.
type UnservedInput struct {
	// Missing are what an undo would restore.
	Missing []Held
	// Versions are the versions the Backup holds each kind at (BackedUpVersions).
	Versions map[string]string
	// Served are the versions each custom resource's CRD serves now
	// (Kind.group); a kind absent from it has no CRD there.
	Served map[string][]string
}

// Unserved decides which kinds of Missing an undo cannot restore: a custom
// resource the Backup holds at a version its CRD no longer serves, which a
// Velero Restore would wait on for good (docs/backup.md, "Versions"). It
// returns why, by kind (Kind.group); a kind whose CRD the same Restore
// brings back, a kind of Kubernetes' own, and one whose version is not
// known are not judged.
func Unserved(in UnservedInput) map[string]string {
	restoredCRDs := map[string]bool{}
	for _, h := range in.Missing {
		if h.Kind == "CustomResourceDefinition" {
			restoredCRDs[h.Name] = true
		}
	}
	out := map[string]string{}
	for _, h := range in.Missing {
		key := h.kindKey()
		version, known := in.Versions[key]
		served, crd := in.Served[key]
		if !known || BuiltInGroup(h.Group) || restoredCRDs[h.Resource+"."+h.Group] || !crd || slices.Contains(served, version) {
			continue
		}
		if _, said := out[key]; said {
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

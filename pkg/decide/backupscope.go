package decide

import (
	"errors"
	"slices"
)

// ScanSkip are the kinds a scan of an uninstall's dependents leaves out:
// Events, and the kinds whose instances the uninstall lists itself (kinds).
func ScanSkip(kinds []CRDScope) func(resource string) bool {
	skip := map[string]bool{"events": true, "events.events.k8s.io": true}
	for _, k := range kinds {
		skip[Held{Group: k.GVR.Group, Resource: k.GVR.Resource}.ResourceOf()] = true
	}
	return func(resource string) bool { return skip[resource] }
}

// BackupPhaseOrNew is a Backup's phase, New before Velero has set one.
func BackupPhaseOrNew(phase string) string {
	if phase == "" {
		return BackupPhaseNew
	}
	return phase
}

// PolicyNamespaces decides the namespaces a Backup's resource policy gives
// an entry of their own (entries: one exact entry a namespace, never a
// pattern, docs/backup.md says why), and those the Backup includes (in):
// the whole kinds of every namespace need no entry, but with something
// named, every namespace there is (c.Existing) gets its entry.
func PolicyNamespaces(c BackupContent) (entries, in []string, _ error) {
	var named []string
	for _, h := range c.Named {
		if h.Namespace != "" && !slices.Contains(named, h.Namespace) {
			named = append(named, h.Namespace)
		}
	}
	every := slices.Contains(c.WholeIn, EveryNamespace)
	switch {
	case every && len(named) == 0:
		return nil, c.Namespaces, nil
	case every && len(c.Existing) == 0:
		return nil, nil, errors.New("a Backup of every namespace with objects named in some must name every namespace, and none is known")
	case every:
		entries = slices.Clone(c.Existing)
	default:
		entries = slices.Clone(c.WholeIn)
	}
	for _, ns := range named {
		if !slices.Contains(entries, ns) {
			entries = append(entries, ns)
		}
	}
	slices.Sort(entries)
	entries = slices.Compact(entries)
	if every {
		return entries, entries, nil
	}
	return entries, c.Namespaces, nil
}

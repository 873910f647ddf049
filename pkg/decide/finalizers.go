package decide

import "slices"

// Finalizers names csv-cleaner's finalizer and the earlier names it still
// recognises as its own.
type Finalizers struct {
	// Current is put on live managed CSVs.
	Current string
	// Legacy names are replaced by Current on live CSVs and count as ours on deleting ones.
	Legacy []string
}

// DefaultFinalizer is the finalizer csv-cleaner puts on managed CSVs.
const DefaultFinalizer = "cleanup.csv-cleaner.io/uninstall"

// Ours reports whether a finalizer name is csv-cleaner's, current or legacy.
func (f Finalizers) Ours(name string) bool {
	return name == f.Current || slices.Contains(f.Legacy, name)
}

// HeldBy reports whether the list holds any of csv-cleaner's finalizers.
func (f Finalizers) HeldBy(list []string) bool {
	return slices.ContainsFunc(list, f.Ours)
}

// Ensure returns the list with the current finalizer present and every legacy
// one gone. A legacy finalizer is replaced in place, so that the order of the
// other controllers' finalizers never changes; otherwise the current one is
// appended. changed is false when the list is already right.
func (f Finalizers) Ensure(list []string) (out []string, changed bool) {
	out = make([]string, 0, len(list)+1)
	placed := false
	for _, name := range list {
		switch {
		case name == f.Current || slices.Contains(f.Legacy, name):
			if !placed {
				out = append(out, f.Current)
				placed = true
			}
		default:
			out = append(out, name)
		}
	}
	if !placed {
		out = append(out, f.Current)
	}
	return out, !slices.Equal(out, list)
}

// Remove returns the list without any of csv-cleaner's finalizers, current or
// legacy, the others in their order. changed is false when none was there.
func (f Finalizers) Remove(list []string) (out []string, changed bool) {
	out = slices.DeleteFunc(slices.Clone(list), f.Ours)
	return out, len(out) != len(list)
}

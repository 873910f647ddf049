package undoplan

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// Excluded are the old install's cluster RBAC and webhook configurations:
// the operator installed again makes its own, and an undo restores none
// of them.
var Excluded = []string{
	"clusterroles.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io",
	"validatingwebhookconfigurations.admissionregistration.k8s.io", "mutatingwebhookconfigurations.admissionregistration.k8s.io",
}

// Restorable are the objects an undo restores of what an uninstall
// deleted and the dependents destroyed with them: every one but the old
// install's cluster RBAC and webhook configurations (Excluded: the
// operator installed after the undo makes its own); the CRDs first (an
// undo runs before the reinstall: it brings back the CRDs the uninstall
// deleted, and finds the others present), then what it deleted, then the
// dependents, each by resource, namespace and name.
func Restorable(deleted, dependents []decide.Held) []decide.Held {
	var out []decide.Held
	rank := map[decide.Held]int{}
	for i, group := range [][]decide.Held{deleted, dependents} {
		for _, h := range group {
			switch {
			case slices.Contains(Excluded, h.ResourceOf()):
			case slices.Contains(out, h):
			default:
				out = append(out, h)
				rank[h] = i + 1
				if h.Kind == "CustomResourceDefinition" {
					rank[h] = 0
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b decide.Held) int {
		return cmp.Or(cmp.Compare(rank[a], rank[b]), strings.Compare(a.ResourceOf()+"/"+a.Namespace+"/"+a.Name, b.ResourceOf()+"/"+b.Namespace+"/"+b.Name))
	})
	return out
}

// Name names the Restore of missing from backup, attempt n (1 the first):
// the same for the same objects and attempt, so that an undo interrupted
// and run again follows the Restore it made rather than make a second; the
// next attempt after a failed one ends in -n. At most 63 characters, as
// Velero's labels take it.
func Name(backup string, missing []decide.Held, attempt int) string {
	h := sha256.New()
	for _, m := range missing {
		_, _ = fmt.Fprintf(h, "%s/%s/%s\n", m.ResourceOf(), m.Namespace, m.Name)
	}
	suffix := "-undo-" + hex.EncodeToString(h.Sum(nil))[:8]
	if attempt > 1 {
		suffix += "-" + strconv.Itoa(attempt)
	}
	if len(backup) > 63-len(suffix) {
		backup = strings.TrimRight(backup[:63-len(suffix)], "-")
	}
	return backup + suffix
}

// CustomResources are the CRDs (plural.group) whose instances an
// uninstall destroyed (of held): the CRDs the operator must serve again.
func CustomResources(held ...[]decide.Held) []string {
	var out []string
	for _, h := range slices.Concat(held...) {
		if h.Kind == "CustomResourceDefinition" || decide.BuiltInGroup(h.Group) {
			continue
		}
		if crd := h.Resource + "." + h.Group; !slices.Contains(out, crd) {
			out = append(out, crd)
		}
	}
	slices.Sort(out)
	return out
}

package undoplan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Live is an object as an undo finds it now.
type Live struct {
	UID types.UID
	// APIVersion is one the API server serves it at now: a reference to it
	// names that one, the version it had may be served no more.
	APIVersion string
	// Owners are its ownerReferences now.
	Owners []metav1.OwnerReference
}

// RelinkInput is what Relink reads.
type RelinkInput struct {
	// Origins are what the uninstall destroyed, as it was.
	Origins []decide.Origin
	// Relink are the objects whose owners are written again: those the
	// undo's Restore brought back (Velero stripped their ownerReferences).
	Relink []decide.Held
	// Now are the objects of Origins there now, by object.
	Now map[decide.Held]Live
	// Present says whether an owner that the uninstall did not destroy is
	// there still, with the UID the reference names: the undo looks each
	// one up (OwnersToLookUp).
	Present func(owner metav1.OwnerReference, namespace string) bool
}

// Link is the ownerReferences an undo writes on one restored object: its
// references as they were, each restored owner's with its new UID, each
// owner that was never destroyed and is there still as it was, and those
// it leaves out with why.
type Link struct {
	Object decide.Held
	// Owners are the object's ownerReferences to write: those it has now,
	// then the ones linked again.
	Owners []metav1.OwnerReference
	// Linked name the owners it is linked to again ("Kind namespace/name"),
	// written now or before; LeftOut, each owner left out and why.
	Linked, LeftOut []string
	// Write: Owners differ from what the object has now.
	Write bool
}

// Relink decides the ownerReferences an undo writes again on the objects
// it restored, owners first: each restored owner by its UID now, each owner
// never destroyed as it was while there, any other left out with why
// (docs/backup.md, "Owners linked again").
func Relink(in RelinkInput) []Link {
	byUID := make(map[types.UID]decide.Origin, len(in.Origins))
	byObject := make(map[decide.Held]decide.Origin, len(in.Origins))
	for _, o := range in.Origins {
		byUID[o.UID] = o
		byObject[o.Object] = o
	}
	var out []Link
	for _, h := range ownersFirst(in.Relink, byObject, byUID) {
		origin, ok := byObject[h]
		now, there := in.Now[h]
		if !ok || !there || len(origin.Owners) == 0 {
			continue
		}
		l := Link{Object: h, Owners: slices.Clone(now.Owners)}
		for _, ref := range origin.Owners {
			name := ownerName(ref, h.Namespace)
			target := ref
			if owner, destroyed := byUID[ref.UID]; destroyed {
				name = owner.Object.KindName() + " " + owner.Object.Path()
				live, back := in.Now[owner.Object]
				if !back {
					l.LeftOut = append(l.LeftOut, name+": not restored")
					continue
				}
				target.UID, target.APIVersion = live.UID, cmp.Or(live.APIVersion, ref.APIVersion)
			} else if !in.Present(ref, h.Namespace) {
				l.LeftOut = append(l.LeftOut, name+": gone")
				continue
			}
			if slices.ContainsFunc(l.Owners, func(r metav1.OwnerReference) bool { return r.UID == target.UID }) {
				l.Linked = append(l.Linked, name)
				continue // there already (linked before, or the operator adopted it)
			}
			if isController(target) && slices.ContainsFunc(l.Owners, isController) {
				l.LeftOut = append(l.LeftOut, name+": another controller owns it now")
				continue // an object has one controller at most
			}
			l.Owners = append(l.Owners, target)
			l.Linked = append(l.Linked, name)
			l.Write = true
		}
		if len(l.Linked) > 0 || len(l.LeftOut) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// OwnersToLookUp are the owners that Relink asks Present about: those the
// uninstall did not destroy, of the objects it relinks.
func OwnersToLookUp(origins []decide.Origin, relink []decide.Held) []OwnerLookup {
	destroyed := make(map[types.UID]bool, len(origins))
	byObject := make(map[decide.Held]decide.Origin, len(origins))
	for _, o := range origins {
		destroyed[o.UID] = true
		byObject[o.Object] = o
	}
	var out []OwnerLookup
	for _, h := range relink {
		for _, ref := range byObject[h].Owners {
			l := OwnerLookup{Ref: ref, Namespace: h.Namespace}
			if !destroyed[ref.UID] && !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// OwnerLookup is an owner an undo looks up: the reference, read in the
// namespace of the object that holds it (a namespaced owner is there, a
// cluster-scoped one anywhere).
type OwnerLookup struct {
	Ref       metav1.OwnerReference
	Namespace string
}

// ownersFirst orders objects so that each comes after those of them that
// own it, transitively (a claim after the StatefulSet after the custom
// resource that owns it); otherwise by kind, namespace and name.
func ownersFirst(objs []decide.Held, byObject map[decide.Held]decide.Origin, byUID map[types.UID]decide.Origin) []decide.Held {
	in := make(map[decide.Held]bool, len(objs))
	for _, h := range objs {
		in[h] = true
	}
	depth := map[decide.Held]int{}
	var depthOf func(h decide.Held, seen map[decide.Held]bool) int
	depthOf = func(h decide.Held, seen map[decide.Held]bool) int {
		if d, ok := depth[h]; ok {
			return d
		}
		if seen[h] {
			return 0 // objects that own each other: no order between them
		}
		seen[h] = true
		d := 0
		for _, ref := range byObject[h].Owners {
			if owner, ok := byUID[ref.UID]; ok && in[owner.Object] {
				d = max(d, depthOf(owner.Object, seen)+1)
			}
		}
		depth[h] = d
		return d
	}
	out := slices.Clone(objs)
	for _, h := range out {
		depthOf(h, map[decide.Held]bool{})
	}
	slices.SortStableFunc(out, func(a, b decide.Held) int {
		return cmp.Or(cmp.Compare(depth[a], depth[b]), strings.Compare(a.ResourceOf()+"/"+a.Path(), b.ResourceOf()+"/"+b.Path()))
	})
	return out
}

// ownerName names an owner for a person: Kind namespace/name, or Kind name
// for a cluster-scoped one (as far as the reference tells, the object's
// namespace).
func ownerName(ref metav1.OwnerReference, ns string) string {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	h := decide.Held{Group: gv.Group, Kind: ref.Kind, Namespace: ns, Name: ref.Name}
	return fmt.Sprintf("%s %s", h.KindName(), h.Path())
}

func isController(r metav1.OwnerReference) bool { return r.Controller != nil && *r.Controller }

package decide

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// Node is one object as the garbage collector sees it: who it is and who
// owns it (its metadata.ownerReferences).
type Node struct {
	Held
	UID    types.UID
	Owners []OwnerRef
	// Terminating: it is being deleted already.
	Terminating bool
	// Stranded: it could be read only at the version it is stored at, not
	// at the one the garbage collector and Velero read (the API server
	// cannot convert it): neither can delete or back it up now.
	Stranded bool
	// VolumeName is a PersistentVolumeClaim's spec.volumeName.
	VolumeName string
}

// OwnerRef is one ownerReference: the owner's UID, group, kind and name;
// its API version and flags, which an undo writes again (Reference).
type OwnerRef struct {
	UID   types.UID
	Group string
	Kind  string
	Name  string

	APIVersion                     string
	Controller, BlockOwnerDeletion *bool
}

// ClosureInput is what Dependents reads.
type ClosureInput struct {
	// Nodes are every object the scan read, in the namespaces and of the
	// kinds where a dependent of the uninstall's deletions can be.
	Nodes []Node
	// Deleted says whether the uninstall deletes the owner that ref names,
	// for a dependent in namespace ns: by the UIDs of its planned deletions,
	// or, before its instances are listed, by their kinds and targets.
	Deleted func(ref OwnerRef, ns string) bool
}

// Dependents are the objects the garbage collector deletes because the
// uninstall deletes what it deletes: the closure of the ownerReferences
// that lead to its deletions, an object with an owner that stays left out,
// as the garbage collector leaves it (docs/backup.md). The result is in
// the order of in.Nodes.
func Dependents(in ClosureInput) []Node {
	byUID := make(map[types.UID]int, len(in.Nodes))
	owned := map[types.UID][]int{}
	for i, n := range in.Nodes {
		byUID[n.UID] = i
		for _, o := range n.Owners {
			owned[o.UID] = append(owned[o.UID], i)
		}
	}
	in2 := make([]bool, len(in.Nodes))
	gone := func(n *Node, o OwnerRef) bool {
		if in.Deleted(o, n.Namespace) {
			return true
		}
		i, present := byUID[o.UID]
		return !present || in2[i] || in.Nodes[i].Terminating
	}
	led := func(n *Node, o OwnerRef) bool {
		if in.Deleted(o, n.Namespace) {
			return true
		}
		i, present := byUID[o.UID]
		return present && in2[i]
	}
	var queue []int
	for i := range in.Nodes {
		for _, o := range in.Nodes[i].Owners {
			if in.Deleted(o, in.Nodes[i].Namespace) {
				queue = append(queue, i)
				break
			}
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		n := &in.Nodes[i]
		if in2[i] || !slices.ContainsFunc(n.Owners, func(o OwnerRef) bool { return led(n, o) }) {
			continue
		}
		if !allOf(n.Owners, func(o OwnerRef) bool { return gone(n, o) }) {
			continue
		}
		in2[i] = true
		queue = append(queue, owned[n.UID]...)
	}
	var out []Node
	for i, ok := range in2 {
		if ok {
			out = append(out, in.Nodes[i])
		}
	}
	return out
}

func allOf[T any](s []T, f func(T) bool) bool {
	for _, v := range s {
		if !f(v) {
			return false
		}
	}
	return true
}

// DeletedByKind is ClosureInput.Deleted before the instances are listed:
// an owner of one of kinds (Kind.group, as CRDScope.Kind names them) in
// targets (a cluster-scoped owner anywhere), or one of others (the other
// deletions, by name). It holds more than the uninstall deletes (an
// instance the plan keeps is taken as deleted), never less: what the
// Backup made from it holds is a superset.
func DeletedByKind(kinds map[string]bool, targets NamespaceSet, others []Held) func(OwnerRef, string) bool {
	byName := DeletedByName(others)
	return func(o OwnerRef, ns string) bool {
		if byName(o, ns) {
			return true
		}
		kind := o.Kind
		if o.Group != "" {
			kind += "." + o.Group
		}
		return kinds[kind] && (ns == "" || targets.Has(ns))
	}
}

// Regenerated reports whether a controller makes objects of the resource
// again from what owns them (Pods, ReplicaSets, ControllerRevisions,
// Endpoints, EndpointSlices; and Events), which a backup leaves out. Their
// dependents are followed all the same.
func Regenerated(resource string) bool {
	switch resource {
	case "pods", "replicasets.apps", "controllerrevisions.apps", "endpoints",
		"endpointslices.discovery.k8s.io", "events", "events.events.k8s.io":
		return true
	}
	return false
}

// ResourceOf is the resource of an object as Velero names it: plural.group,
// the plural alone for the core group.
func (d Held) ResourceOf() string {
	if d.Group == "" {
		return d.Resource
	}
	return d.Resource + "." + d.Group
}

// KindName names the object's kind for a person: Kind, or Kind.group
// outside Kubernetes' own groups.
func (d Held) KindName() string {
	if d.Group == "" || d.Group == "apps" || d.Group == "batch" || strings.HasSuffix(d.Group, ".k8s.io") {
		return d.Kind
	}
	return d.Kind + "." + d.Group
}

// String names the object for a person: Kind namespace/name.
func (d Held) String() string {
	kind := d.KindName()
	if d.Namespace == "" {
		return kind + " " + d.Name
	}
	return kind + " " + d.Namespace + "/" + d.Name
}

// DeletedByName is ClosureInput.Deleted for the planned deletions: an
// owner reference names one by group, kind and name, in the dependent's
// namespace or cluster-scoped. (An owner of that name whose UID differs is
// another object: the garbage collector deletes its dependents all the
// same, since the owner they name is gone.)
func DeletedByName(deletions []Held) func(OwnerRef, string) bool {
	set := make(map[Held]bool, len(deletions))
	for _, d := range deletions {
		set[Held{Group: d.Group, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name}] = true
	}
	return func(o OwnerRef, ns string) bool {
		return set[Held{Group: o.Group, Kind: o.Kind, Namespace: ns, Name: o.Name}] || set[Held{Group: o.Group, Kind: o.Kind, Name: o.Name}]
	}
}

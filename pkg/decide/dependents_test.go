package decide

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// node is an object of the scan with its owners' UIDs.
func node(kind, ns, name string, uid types.UID, owners ...types.UID) Node {
	n := Node{Held: Held{Kind: kind, Resource: kind + "s", Namespace: ns, Name: name}, UID: uid}
	for _, o := range owners {
		n.Owners = append(n.Owners, OwnerRef{UID: o, Kind: "Owner", Name: string(o)})
	}
	return n
}

// TestDependents follows ownerReferences as the garbage collector does:
// what an object the uninstall deletes owns goes with it, transitively,
// unless another owner stays.
func TestDependents(t *testing.T) {
	deleted := func(uids ...types.UID) func(OwnerRef, string) bool {
		return func(o OwnerRef, _ string) bool { return slices.Contains(uids, o.UID) }
	}
	tests := []struct {
		name    string
		nodes   []Node
		deleted func(OwnerRef, string) bool
		want    []string
	}{
		{
			name: "what a deleted operand owns, transitively",
			nodes: []Node{
				node("Secret", "a", "s", "s", "op"),
				node("StatefulSet", "a", "db", "sts", "op"),
				node("PersistentVolumeClaim", "a", "data-db-0", "pvc", "sts"),
				node("Pod", "a", "db-0", "pod", "sts"),
				node("ConfigMap", "a", "unrelated", "cm"),
			},
			deleted: deleted("op"),
			want:    []string{"s", "db", "data-db-0", "db-0"},
		},
		{
			name: "an object with a second owner that stays is kept, and so is what it alone owns",
			nodes: []Node{
				node("ConfigMap", "a", "shared", "shared", "op", "keeper"),
				node("Deployment", "a", "keeper", "keeper"),
				node("Secret", "a", "child-of-shared", "child", "shared"),
			},
			deleted: deleted("op"),
		},
		{
			name: "a second owner that goes too: both deleted, one being deleted, or absent",
			nodes: []Node{
				node("ConfigMap", "a", "both", "both", "op", "op2"),
				node("ConfigMap", "a", "terminating", "t", "op", "dying"),
				func() Node { n := node("Deployment", "a", "dying", "dying"); n.Terminating = true; return n }(),
				node("ConfigMap", "a", "dangling", "d", "op", "gone-already"),
			},
			deleted: deleted("op", "op2"),
			want:    []string{"both", "terminating", "dangling"},
		},
		{
			name: "a cluster-scoped dependent, and a namespaced one of a cluster-scoped operand",
			nodes: []Node{
				node("ClusterRole", "", "per-tenant", "cr", "tenant"),
				node("Secret", "x", "tenant-creds", "sec", "tenant"),
			},
			deleted: deleted("tenant"),
			want:    []string{"per-tenant", "tenant-creds"},
		},
		{
			name: "a cycle a deleted object leads into stays: c1 has c2, a solid owner, as the garbage collector sees it",
			nodes: []Node{
				node("ConfigMap", "a", "c1", "c1", "op", "c2"),
				node("ConfigMap", "a", "c2", "c2", "c1"),
			},
			deleted: deleted("op"),
		},
		{
			name: "objects that own each other and nothing deleted leads to stay",
			nodes: []Node{
				node("ConfigMap", "a", "c1", "c1", "c2"),
				node("ConfigMap", "a", "c2", "c2", "c1"),
				node("Secret", "a", "s", "s", "op"),
			},
			deleted: deleted("op"),
			want:    []string{"s"},
		},
		{
			name: "a dangling or dying owner alone does not make a dependent",
			nodes: []Node{
				node("ConfigMap", "a", "orphan", "o", "gone-already"),
				node("ConfigMap", "a", "of-dying", "od", "dying"),
				func() Node { n := node("Deployment", "a", "dying", "dying"); n.Terminating = true; return n }(),
			},
			deleted: deleted("op"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, n := range Dependents(ClosureInput{Nodes: tt.nodes, Deleted: tt.deleted}) {
				got = append(got, n.Name)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Dependents = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDeletedByName(t *testing.T) {
	deleted := DeletedByName([]Held{
		{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: "a", Name: "w1"},
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Resource: "customresourcedefinitions", Name: "widgets.example.com"},
	})
	tests := []struct {
		ref  OwnerRef
		ns   string
		want bool
	}{
		{OwnerRef{Group: "example.com", Kind: "Widget", Name: "w1"}, "a", true},
		{OwnerRef{Group: "example.com", Kind: "Widget", Name: "w1"}, "b", false},
		{OwnerRef{Group: "other.io", Kind: "Widget", Name: "w1"}, "a", false},
		{OwnerRef{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "widgets.example.com"}, "", true},
		{OwnerRef{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "widgets.example.com"}, "a", true},
	}
	for _, tt := range tests {
		if got := deleted(tt.ref, tt.ns); got != tt.want {
			t.Errorf("DeletedByName(%+v in %q) = %v, want %v", tt.ref, tt.ns, got, tt.want)
		}
	}
}

func TestDeletedByKind(t *testing.T) {
	role := Held{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Resource: "clusterroles", Name: "op"}
	deleted := DeletedByKind(map[string]bool{"Widget.example.com": true, "Cluster.example.com": true}, NewNamespaceSet([]string{"a"}), []Held{role})
	tests := []struct {
		ref  OwnerRef
		ns   string
		want bool
	}{
		{OwnerRef{Group: "example.com", Kind: "Widget", Name: "any"}, "a", true},
		{OwnerRef{Group: "example.com", Kind: "Widget", Name: "any"}, "b", false},
		{OwnerRef{Group: "example.com", Kind: "Cluster", Name: "c"}, "", true},
		{OwnerRef{Group: "example.com", Kind: "Gadget", Name: "g"}, "a", false},
		{OwnerRef{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "op"}, "", true},
	}
	for _, tt := range tests {
		if got := deleted(tt.ref, tt.ns); got != tt.want {
			t.Errorf("DeletedByKind(%+v in %q) = %v, want %v", tt.ref, tt.ns, got, tt.want)
		}
	}
}

func TestRegenerated(t *testing.T) {
	for r, want := range map[string]bool{"pods": true, "replicasets.apps": true, "endpointslices.discovery.k8s.io": true, "events": true,
		"secrets": false, "configmaps": false, "persistentvolumeclaims": false, "statefulsets.apps": false, "widgets.example.com": false} {
		if got := Regenerated(r); got != want {
			t.Errorf("Regenerated(%s) = %v, want %v", r, got, want)
		}
	}
}

package dependents

import (
	"testing"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// TestByList reads by LIST only where it reads few more objects than are
// wanted, and GETs a few wanted objects whatever their kind counts.
func TestByList(t *testing.T) {
	tests := []struct {
		name          string
		wanted, total int
		want          bool
	}{
		{"every claim of a namespace", 1000, 1000, true},
		{"a tenth of them", 100, 1000, true},
		{"fewer than a tenth", 99, 1000, false},
		{"a few, alone in their namespace", 7, 7, false},
		{"as many as listing starts at", 8, 8, true},
		{"more than the scan counted (made since)", 20, 10, true},
		{"one among many", 1, 100000, false},
		{"none", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := byList(tt.wanted, tt.total); got != tt.want {
				t.Errorf("byList(%d, %d) = %v, want %v", tt.wanted, tt.total, got, tt.want)
			}
		})
	}
}

// TestCounted counts a core resource's objects per namespace, and nothing
// of another group's resource of the same name.
func TestCounted(t *testing.T) {
	node := func(group, resource, ns, name string) decide.Node {
		return decide.Node{Held: decide.Held{Group: group, Resource: resource, Namespace: ns, Name: name}}
	}
	nodes := []decide.Node{
		node("", "persistentvolumeclaims", "a", "c1"), node("", "persistentvolumeclaims", "a", "c2"),
		node("", "persistentvolumeclaims", "b", "c1"), node("", "persistentvolumes", "", "v1"),
		node("example.com", "persistentvolumeclaims", "a", "c3"), node("", "configmaps", "a", "c1"),
	}
	got := counted(nodes, "persistentvolumeclaims")
	if len(got) != 2 || got["a"] != 2 || got["b"] != 1 {
		t.Errorf("counted claims = %v, want a: 2, b: 1", got)
	}
	if got := counted(nodes, "persistentvolumes"); len(got) != 1 || got[""] != 1 {
		t.Errorf("counted volumes = %v, want \"\": 1", got)
	}
}

package decide

import (
	"slices"
	"testing"
)

// TestPolicyNamespaces: a namespace gets an entry of its own where
// something is named in it or its whole kinds are taken; with every
// namespace's whole kinds and something named, every namespace there is.
func TestPolicyNamespaces(t *testing.T) {
	secret := func(ns string) Held { return Held{Kind: "Secret", Resource: "secrets", Namespace: ns, Name: "s"} }
	for _, tt := range []struct {
		name        string
		c           BackupContent
		entries, in []string
		wantErr     bool
	}{
		{"named in two, whole in one", BackupContent{Namespaces: []string{"a", "b", "c"}, WholeIn: []string{"c"}, Named: []Held{secret("b"), secret("a"), secret("b")}},
			[]string{"a", "b", "c"}, []string{"a", "b", "c"}, false},
		{"every namespace, nothing named", BackupContent{Namespaces: []string{EveryNamespace}, WholeIn: []string{EveryNamespace}},
			nil, []string{EveryNamespace}, false},
		{"every namespace and one named", BackupContent{WholeIn: []string{EveryNamespace}, Named: []Held{secret("z")}, Existing: []string{"b", "a"}},
			[]string{"a", "b", "z"}, []string{"a", "b", "z"}, false},
		{"every namespace, named, none known", BackupContent{WholeIn: []string{EveryNamespace}, Named: []Held{secret("z")}}, nil, nil, true},
		{"cluster-scoped only", BackupContent{Named: []Held{{Kind: "ClusterRole", Resource: "clusterroles.rbac.authorization.k8s.io", Name: "r"}}}, nil, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			entries, in, err := PolicyNamespaces(tt.c)
			if (err != nil) != tt.wantErr || !slices.Equal(entries, tt.entries) || !slices.Equal(in, tt.in) {
				t.Errorf("PolicyNamespaces = %q, %q, %v; want %q, %q, error %v", entries, in, err, tt.entries, tt.in, tt.wantErr)
			}
		})
	}
}

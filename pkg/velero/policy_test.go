package velero

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

func readPolicy(t *testing.T, y string) policy {
	t.Helper()
	var p policy
	if err := yaml.UnmarshalStrict([]byte(y), &p); err != nil {
		t.Fatalf("the policy is not Velero's format: %v\n%s", err, y)
	}
	return p
}

// TestBackupPolicy: a Backup's resource policy takes the whole kinds where
// they are taken and the named objects by name, in one entry a namespace,
// the exact namespaces before every namespace's pattern.
func TestBackupPolicy(t *testing.T) {
	secret := func(ns, name string) decide.Held {
		return decide.Held{Kind: "Secret", Resource: "secrets", Namespace: ns, Name: name}
	}
	pvc := func(ns, name string) decide.Held {
		return decide.Held{Kind: "PersistentVolumeClaim", Resource: "persistentvolumeclaims", Namespace: ns, Name: name}
	}
	role := decide.Held{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Resource: "clusterroles", Name: "op"}
	pv := decide.Held{Kind: "PersistentVolume", Resource: "persistentvolumes", Name: "pv-1"}
	widgets := decide.WholeKind{Resource: "widgets.example.com", Namespaced: true}
	// A Backup names no PersistentVolume of a claim it snapshots: Velero
	// would take it as an item of its claim, from every worker at once.
	noPVs := []string{"persistentvolumes"}
	tests := []struct {
		name           string
		content        decide.BackupContent
		wantNamespaces []string
		want           policy
	}{
		{
			name: "target namespaces, dependents by name; a PersistentVolume named as a dependent is kept, not excluded",
			content: decide.BackupContent{Namespaces: []string{"a", "b"}, WholeIn: []string{"a", "b"}, Whole: []decide.WholeKind{widgets},
				Named: []decide.Held{role, pv, pvc("a", "data"), secret("a", "s1"), secret("a", "s2")}},
			wantNamespaces: []string{"a", "b"},
			want: policy{Version: "v1",
				IncludeExcludePolicy: &includeExclude{IncludedClusterScopedResources: []string{"clusterroles.rbac.authorization.k8s.io", "persistentvolumes"},
					IncludedNamespaceScopedResources: []string{"persistentvolumeclaims", "secrets", "widgets.example.com"}},
				Namespaced: []namespacedFilter{
					{Namespaces: []string{"a"}, ResourceFilters: []resourceFilter{{Kinds: []string{"widgets.example.com"}},
						{Kinds: []string{"persistentvolumeclaims"}, Names: []string{"data"}}, {Kinds: []string{"secrets"}, Names: []string{"s1", "s2"}}}},
					{Namespaces: []string{"b"}, ResourceFilters: []resourceFilter{{Kinds: []string{"widgets.example.com"}}}},
				},
				ClusterScoped: &clusterScopedFilter{ResourceFilters: []resourceFilter{
					{Kinds: []string{"clusterroles.rbac.authorization.k8s.io"}, Names: []string{"op"}},
					{Kinds: []string{"persistentvolumes"}, Names: []string{"pv-1"}}}}},
		},
		{
			name: "every namespace, nothing named in one: no entry, the global includes take the whole kinds",
			content: decide.BackupContent{Namespaces: []string{decide.EveryNamespace}, WholeIn: []string{decide.EveryNamespace}, Whole: []decide.WholeKind{widgets},
				Named: []decide.Held{role}},
			wantNamespaces: []string{decide.EveryNamespace},
			want: policy{Version: "v1",
				IncludeExcludePolicy: &includeExclude{IncludedClusterScopedResources: []string{"clusterroles.rbac.authorization.k8s.io"}, ExcludedClusterScopedResources: noPVs, IncludedNamespaceScopedResources: []string{"widgets.example.com"}},
				ClusterScoped:        &clusterScopedFilter{ResourceFilters: []resourceFilter{{Kinds: []string{"clusterroles.rbac.authorization.k8s.io"}, Names: []string{"op"}}}}},
		},
		{
			name: "every namespace with something named: an exact entry for each namespace there is, never the * pattern",
			content: decide.BackupContent{Namespaces: []string{decide.EveryNamespace}, WholeIn: []string{decide.EveryNamespace}, Whole: []decide.WholeKind{widgets},
				Named: []decide.Held{secret("c", "s1")}, Existing: []string{"a", "c"}},
			wantNamespaces: []string{"a", "c"},
			want: policy{Version: "v1",
				IncludeExcludePolicy: &includeExclude{ExcludedClusterScopedResources: noPVs, IncludedNamespaceScopedResources: []string{"secrets", "widgets.example.com"}},
				Namespaced: []namespacedFilter{
					{Namespaces: []string{"a"}, ResourceFilters: []resourceFilter{{Kinds: []string{"widgets.example.com"}}}},
					{Namespaces: []string{"c"}, ResourceFilters: []resourceFilter{{Kinds: []string{"widgets.example.com"}}, {Kinds: []string{"secrets"}, Names: []string{"s1"}}}},
				}},
		},
		{
			name: "a claim whose volume is snapshotted: its PersistentVolume excluded, never taken as the claim's item",
			content: decide.BackupContent{Namespaces: []string{"a"}, WholeIn: []string{"a"}, Whole: []decide.WholeKind{widgets},
				Named: []decide.Held{pvc("a", "data")}},
			wantNamespaces: []string{"a"},
			want: policy{Version: "v1",
				IncludeExcludePolicy: &includeExclude{ExcludedClusterScopedResources: noPVs,
					IncludedNamespaceScopedResources: []string{"persistentvolumeclaims", "widgets.example.com"}},
				Namespaced: []namespacedFilter{{Namespaces: []string{"a"}, ResourceFilters: []resourceFilter{{Kinds: []string{"widgets.example.com"}},
					{Kinds: []string{"persistentvolumeclaims"}, Names: []string{"data"}}}}}},
		},
		{
			name:           "nothing namespaced: Velero's namespace with the policy alone, not every namespace",
			content:        decide.BackupContent{Whole: []decide.WholeKind{{Resource: "clusters.example.com"}}, Named: []decide.Held{role}},
			wantNamespaces: []string{"velero"},
			want: policy{Version: "v1",
				IncludeExcludePolicy: &includeExclude{IncludedClusterScopedResources: []string{"clusterroles.rbac.authorization.k8s.io", "clusters.example.com"}, ExcludedClusterScopedResources: noPVs,
					IncludedNamespaceScopedResources: []string{"configmaps"}},
				Namespaced: []namespacedFilter{{Namespaces: []string{"velero"}, ResourceFilters: []resourceFilter{{Kinds: []string{"configmaps"}, Names: []string{"b1"}}}}},
				ClusterScoped: &clusterScopedFilter{ResourceFilters: []resourceFilter{
					{Kinds: []string{"clusterroles.rbac.authorization.k8s.io"}, Names: []string{"op"}}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y, namespaces, err := BackupPolicy(tt.content, "velero", "b1")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(namespaces, tt.wantNamespaces) {
				t.Errorf("includedNamespaces = %v, want %v", namespaces, tt.wantNamespaces)
			}
			if got := readPolicy(t, y); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("BackupPolicy =\n%s\nwant\n%+v", y, tt.want)
			}
		})
	}
}

// TestBackupPolicyNeedsNamespaces: a Backup of every namespace with
// something named cannot be written without the namespaces there are.
func TestBackupPolicyNeedsNamespaces(t *testing.T) {
	c := decide.BackupContent{Namespaces: []string{decide.EveryNamespace}, WholeIn: []string{decide.EveryNamespace},
		Whole: []decide.WholeKind{{Resource: "widgets.example.com", Namespaced: true}}, Named: []decide.Held{{Kind: "Secret", Resource: "secrets", Namespace: "c", Name: "s"}}}
	if !c.NeedsNamespaces() {
		t.Error("NeedsNamespaces = false for every namespace with a Secret named")
	}
	if _, _, err := BackupPolicy(c, "velero", "b1"); err == nil {
		t.Error("BackupPolicy wrote a policy without the namespaces there are")
	}
}

// TestRestorePolicy names exactly the objects, by namespace and kind.
func TestRestorePolicy(t *testing.T) {
	y, err := RestorePolicy([]decide.Held{
		{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: "b", Name: "w2"},
		{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: "a", Name: "w1"},
		{Kind: "Secret", Resource: "secrets", Namespace: "a", Name: "s1"},
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Resource: "customresourcedefinitions", Name: "widgets.example.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := policy{Version: "v1",
		Namespaced: []namespacedFilter{
			{Namespaces: []string{"a"}, ResourceFilters: []resourceFilter{{Kinds: []string{"secrets"}, Names: []string{"s1"}}, {Kinds: []string{"widgets.example.com"}, Names: []string{"w1"}}}},
			{Namespaces: []string{"b"}, ResourceFilters: []resourceFilter{{Kinds: []string{"widgets.example.com"}, Names: []string{"w2"}}}},
		},
		ClusterScoped: &clusterScopedFilter{ResourceFilters: []resourceFilter{{Kinds: []string{"customresourcedefinitions.apiextensions.k8s.io"}, Names: []string{"widgets.example.com"}}}}}
	if got := readPolicy(t, y); !reflect.DeepEqual(got, want) {
		t.Errorf("RestorePolicy =\n%s\nwant\n%+v", y, want)
	}
}

// TestPolicyTooLarge: a policy that a ConfigMap cannot hold is an error, never cut short.
func TestPolicyTooLarge(t *testing.T) {
	var many []decide.Held
	for i := range 30000 {
		many = append(many, decide.Held{Kind: "Secret", Resource: "secrets", Namespace: "a", Name: strings.Repeat("s", 40) + string(rune('a'+i%26)) + strings.Repeat("x", i%7)})
	}
	if _, err := RestorePolicy(many); err == nil || !strings.Contains(err.Error(), "more than a ConfigMap holds") {
		t.Errorf("RestorePolicy of 30,000 long names = %v, want an error", err)
	}
}

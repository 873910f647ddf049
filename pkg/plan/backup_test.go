package plan

import (
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func TestBackupName(t *testing.T) {
	long := strings.Repeat("very-long-operator-name.", 5) + "v1.0.0"
	tests := []struct {
		name                 string
		kind, namespace, csv string
		uid                  types.UID
		wantPrefix           string
	}{
		{name: "a CSV's", kind: "ClusterServiceVersion", namespace: "operators", csv: "etcd.v0.9.4", uid: "u1", wantPrefix: "csv-cleaner-etcd-v0-9-4-"},
		{name: "a ClusterExtension's", kind: "ClusterExtension", csv: "argocd", uid: "u2", wantPrefix: "csv-cleaner-argocd-"},
		{name: "a long name is cut, the hash kept", kind: "ClusterServiceVersion", namespace: "ops", csv: long, uid: "u3", wantPrefix: "csv-cleaner-very-long-operator-name-"},
		{name: "a name of no letter is the hash alone", kind: "ClusterExtension", csv: "...", uid: "u4", wantPrefix: "csv-cleaner-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BackupName(tt.kind, tt.namespace, tt.csv, tt.uid)
			if !dnsLabel.MatchString(got) || len(got) > 63 {
				t.Errorf("BackupName = %q (%d characters): not a DNS label of at most 63", got, len(got))
			}
			if !strings.HasPrefix(got, tt.wantPrefix) {
				t.Errorf("BackupName = %q, want it to start with %q", got, tt.wantPrefix)
			}
			if again := BackupName(tt.kind, tt.namespace, tt.csv, tt.uid); again != got {
				t.Errorf("BackupName is %q, then %q: a restart would make a second Backup", got, again)
			}
		})
	}
	a := BackupName("ClusterServiceVersion", "ops", "etcd.v1", "uid-1")
	if b := BackupName("ClusterServiceVersion", "ops", "etcd.v1", "uid-2"); a == b {
		t.Errorf("a reinstalled CSV of the same name (another UID) gets the same Backup %q", a)
	}
	if b := BackupName("ClusterServiceVersion", "other", "etcd.v1", "uid-1"); a == b {
		t.Errorf("a CSV of the same name in another namespace gets the same Backup %q", a)
	}
}

func TestBackupScope(t *testing.T) {
	tests := []struct {
		name      string
		deletions []Deletion
		want      BackupContent
	}{
		{name: "nothing to delete, nothing to include"},
		{
			name: "operands in two namespaces, of two kinds",
			deletions: []Deletion{
				{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: "b", Name: "w1"},
				{Group: "example.com", Kind: "Gadget", Resource: "gadgets", Namespace: "a", Name: "g1"},
				{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: "a", Name: "w2"},
			},
			want: BackupContent{Namespaces: []string{"a", "b"}, Resources: []string{"gadgets.example.com", "widgets.example.com"}},
		},
		{
			name: "a cluster-scoped operand and its CRD",
			deletions: []Deletion{
				{Group: "example.com", Kind: "Cluster", Resource: "clusters", Name: "c1"},
				{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Resource: "customresourcedefinitions", Name: "clusters.example.com"},
			},
			want: BackupContent{Resources: []string{"clusters.example.com", "customresourcedefinitions.apiextensions.k8s.io"}, ClusterScoped: true},
		},
		{
			name:      "the core group has no suffix",
			deletions: []Deletion{{Kind: "ConfigMap", Resource: "configmaps", Namespace: "a", Name: "c"}},
			want:      BackupContent{Namespaces: []string{"a"}, Resources: []string{"configmaps"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BackupScope(tt.deletions); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("BackupScope = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestBackupScopeOfKinds(t *testing.T) {
	widgets := CRDScope{Kind: "Widget.example.com", GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, Namespaced: true}
	gadgets := CRDScope{Kind: "Gadget.example.com", GVR: schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "gadgets"}, Namespaced: true}
	clusters := CRDScope{Kind: "Cluster.example.com", GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "clusters"}}
	role := Deletion{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Resource: "clusterroles", Name: "op"}
	tests := []struct {
		name    string
		kinds   []CRDScope
		targets NamespaceSet
		others  []Deletion
		want    BackupContent
	}{
		{name: "no kind and nothing else: nothing to include", targets: AllNamespaces()},
		{
			name: "every namespace: the kinds everywhere", kinds: []CRDScope{widgets, gadgets}, targets: AllNamespaces(),
			want: BackupContent{Namespaces: []string{EveryNamespace}, Resources: []string{"gadgets.example.com", "widgets.example.com"}},
		},
		{
			name: "namespaced targets: those namespaces, never the \"\" beside them", kinds: []CRDScope{widgets}, targets: NewNamespaceSet([]string{"b", "", "a"}),
			want: BackupContent{Namespaces: []string{"a", "b"}, Resources: []string{"widgets.example.com"}},
		},
		{
			name: "a cluster-scoped kind names no namespace", kinds: []CRDScope{clusters}, targets: NewNamespaceSet([]string{"a"}),
			want: BackupContent{Resources: []string{"clusters.example.com"}, ClusterScoped: true},
		},
		{
			name: "the other deletions are added", kinds: []CRDScope{widgets, clusters}, targets: NewNamespaceSet([]string{"a"}), others: []Deletion{role},
			want: BackupContent{Namespaces: []string{"a"}, Resources: []string{"clusterroles.rbac.authorization.k8s.io", "clusters.example.com", "widgets.example.com"}, ClusterScoped: true},
		},
		{
			name: "only other deletions", targets: AllNamespaces(), others: []Deletion{role},
			want: BackupContent{Resources: []string{"clusterroles.rbac.authorization.k8s.io"}, ClusterScoped: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BackupScopeOfKinds(tt.kinds, tt.targets, tt.others)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("BackupScopeOfKinds = %+v, want %+v", got, tt.want)
			}
			if got.Empty() != (len(tt.want.Resources) == 0) {
				t.Errorf("Empty() = %v for %+v", got.Empty(), got)
			}
		})
	}
}

// TestBackupScopeOfKindsHoldsThePlan: whatever instances of the kinds the
// plan deletes in the targets, the Backup made before the plan includes
// their resources and namespaces.
func TestBackupScopeOfKindsHoldsThePlan(t *testing.T) {
	widgets := CRDScope{Kind: "Widget.example.com", GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, Namespaced: true}
	for _, targets := range []NamespaceSet{AllNamespaces(), NewNamespaceSet([]string{"a", "b"})} {
		content := BackupScopeOfKinds([]CRDScope{widgets}, targets, nil)
		planned := BackupScope([]Deletion{
			{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: "a", Name: "w1"},
			{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: "b", Name: "w2"},
		})
		for _, r := range planned.Resources {
			if !slices.Contains(content.Resources, r) {
				t.Errorf("targets %v: the Backup lacks resource %s", targets, r)
			}
		}
		for _, ns := range planned.Namespaces {
			if !slices.Contains(content.Namespaces, ns) && !slices.Contains(content.Namespaces, EveryNamespace) {
				t.Errorf("targets %v: the Backup lacks namespace %s", targets, ns)
			}
		}
	}
}

func TestGateOnBackup(t *testing.T) {
	tests := []struct {
		phase      string
		wait       bool
		verify     bool
		wantReason string
	}{
		{phase: "", wait: true},
		{phase: BackupPhaseNew, wait: true},
		{phase: BackupPhaseInProgress, wait: true},
		{phase: BackupPhaseWaitingForPlugins, wait: true},
		{phase: BackupPhaseWaitingPartial, wait: true},
		{phase: BackupPhaseFinalizing, wait: true},
		{phase: BackupPhaseFinalizingPartial, wait: true},
		{phase: "SomePhaseOfALaterVelero", wait: true},
		{phase: BackupPhaseCompleted, verify: true},
		{phase: BackupPhasePartiallyFailed, wantReason: cleanupv1alpha1.BlockedBackupFailed},
		{phase: BackupPhaseFailed, wantReason: cleanupv1alpha1.BlockedBackupFailed},
		{phase: BackupPhaseFailedValidation, wantReason: cleanupv1alpha1.BlockedBackupFailed},
		{phase: BackupPhaseDeleting, wantReason: cleanupv1alpha1.BlockedBackupFailed},
	}
	for _, tt := range tests {
		t.Run(cmpOrEmpty(tt.phase), func(t *testing.T) {
			got := GateOnBackup("csv-cleaner-etcd-0123456789", tt.phase)
			if got.Wait != tt.wait || got.Verify != tt.verify {
				t.Errorf("GateOnBackup(%q) = wait %v, verify %v; want wait %v, verify %v", tt.phase, got.Wait, got.Verify, tt.wait, tt.verify)
			}
			switch {
			case tt.wantReason == "" && got.Problem != nil:
				t.Errorf("GateOnBackup(%q) blocks (%s)", tt.phase, got.Problem.Reason)
			case tt.wantReason != "" && (got.Problem == nil || got.Problem.Reason != tt.wantReason):
				t.Errorf("GateOnBackup(%q) = %+v, want it Blocked %s", tt.phase, got.Problem, tt.wantReason)
			case got.Problem != nil && !strings.Contains(got.Problem.Message, "csv-cleaner-etcd-0123456789"):
				t.Errorf("the message %q does not name the Backup", got.Problem.Message)
			}
		})
	}
}

func cmpOrEmpty(s string) string {
	if s == "" {
		return "no phase yet"
	}
	return s
}

func TestVerifyBackup(t *testing.T) {
	widget := func(ns, name string) Deletion {
		return Deletion{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: ns, Name: name}
	}
	crd := Deletion{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Resource: "customresourcedefinitions", Name: "widgets.example.com"}
	cm := Deletion{Kind: "ConfigMap", Resource: "configmaps", Namespace: "a", Name: "c"}
	tests := []struct {
		name        string
		list        map[string][]string
		deletions   []Deletion
		wantMissing []Deletion
	}{
		{
			name:      "every deletion held, and more",
			list:      map[string][]string{"example.com/v1/Widget": {"a/w1", "b/w2", "b/other"}, "apiextensions.k8s.io/v1/CustomResourceDefinition": {"widgets.example.com"}, "v1/ConfigMap": {"a/c"}},
			deletions: []Deletion{widget("a", "w1"), widget("b", "w2"), crd, cm},
		},
		{
			name:      "held at another version of the kind",
			list:      map[string][]string{"example.com/v2/Widget": {"a/w1"}},
			deletions: []Deletion{widget("a", "w1")},
		},
		{
			name:        "an operand created after the backup began",
			list:        map[string][]string{"example.com/v1/Widget": {"a/w1"}},
			deletions:   []Deletion{widget("a", "w1"), widget("a", "late")},
			wantMissing: []Deletion{widget("a", "late")},
		},
		{
			name:        "the same name in another namespace is not the object",
			list:        map[string][]string{"example.com/v1/Widget": {"b/w1"}},
			deletions:   []Deletion{widget("a", "w1")},
			wantMissing: []Deletion{widget("a", "w1")},
		},
		{
			name:        "the same name of another group is not the object",
			list:        map[string][]string{"other.io/v1/Widget": {"a/w1"}},
			deletions:   []Deletion{widget("a", "w1")},
			wantMissing: []Deletion{widget("a", "w1")},
		},
		{
			name:        "an empty list holds nothing",
			deletions:   []Deletion{crd},
			wantMissing: []Deletion{crd},
		},
		{name: "nothing to delete needs nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			missing, problem := VerifyBackup("b1", tt.list, tt.deletions)
			if !reflect.DeepEqual(missing, tt.wantMissing) {
				t.Errorf("VerifyBackup missing = %+v, want %+v", missing, tt.wantMissing)
			}
			switch {
			case len(tt.wantMissing) == 0 && problem != nil:
				t.Errorf("VerifyBackup blocks: %s", problem.Message)
			case len(tt.wantMissing) > 0 && (problem == nil || problem.Reason != cleanupv1alpha1.BlockedBackupIncomplete):
				t.Errorf("VerifyBackup = %+v, want it Blocked %s", problem, cleanupv1alpha1.BlockedBackupIncomplete)
			}
		})
	}
}

func TestDeletionsOf(t *testing.T) {
	plurals := map[string]string{"example.com/Widget": "widgets", "rbac.authorization.k8s.io/ClusterRole": "clusterroles",
		"apiextensions.k8s.io/CustomResourceDefinition": "customresourcedefinitions", "/ConfigMap": "configmaps"}
	plural := func(group, kind string) (string, error) {
		if p, ok := plurals[group+"/"+kind]; ok {
			return p, nil
		}
		return "", errors.New("no such kind")
	}
	items := []Item{
		{Action: ActionDelete, Kind: "Widget.example.com", Namespace: "a", Name: "w1", Reason: DeleteOwnedOperand},
		{Action: ActionKeep, Kind: "Widget.example.com", Namespace: "b", Name: "w2", Reason: cleanupv1alpha1.KeepOutsideTargets},
		{Action: ActionDelete, Kind: "Widget.example.com", Namespace: "a", Name: "w3", Reason: DeleteTerminating},
		{Action: ActionDelete, Kind: "Widget.example.com", Namespace: "a", Name: "w4", Reason: DeleteRemoveFinalizers},
		{Action: ActionDelete, Kind: "ClusterRole.rbac.authorization.k8s.io", Name: "r", Reason: DeleteOwnerLabels},
		{Action: ActionDelete, Kind: CRDKind, Name: "widgets.example.com", Reason: DeleteGarbageCollected},
		{Action: ActionUpdate, Kind: CRDKind, Name: "widgets.example.com", Reason: UpdateConversionNone},
		{Action: ActionDelete, Kind: "ConfigMap", Namespace: "a", Name: "c", Reason: DeleteOwnedOperand},
	}
	got, err := DeletionsOf(items, plural)
	if err != nil {
		t.Fatal(err)
	}
	want := []Deletion{
		{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: "a", Name: "w1"},
		{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Resource: "clusterroles", Name: "r"},
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Resource: "customresourcedefinitions", Name: "widgets.example.com"},
		{Kind: "ConfigMap", Resource: "configmaps", Namespace: "a", Name: "c"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DeletionsOf =\n%+v\nwant\n%+v", got, want)
	}
	if _, err := DeletionsOf([]Item{{Action: ActionDelete, Kind: "Gadget.example.com", Name: "g", Reason: DeleteOwnedOperand}}, plural); err == nil {
		t.Error("DeletionsOf named a resource it could not find: want an error, so that the gate blocks")
	}
}

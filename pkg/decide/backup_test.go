package decide

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

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
			got := BackupName(tt.kind, tt.namespace, tt.csv, tt.uid, 1)
			if !dnsLabel.MatchString(got) || len(got) > 63 {
				t.Errorf("BackupName = %q (%d characters): not a DNS label of at most 63", got, len(got))
			}
			if !strings.HasPrefix(got, tt.wantPrefix) {
				t.Errorf("BackupName = %q, want it to start with %q", got, tt.wantPrefix)
			}
			if again := BackupName(tt.kind, tt.namespace, tt.csv, tt.uid, 1); again != got {
				t.Errorf("BackupName is %q, then %q: a restart would make a second Backup", got, again)
			}
		})
	}
	a := BackupName("ClusterServiceVersion", "ops", "etcd.v1", "uid-1", 1)
	if b := BackupName("ClusterServiceVersion", "ops", "etcd.v1", "uid-2", 1); a == b {
		t.Errorf("a reinstalled CSV of the same name (another UID) gets the same Backup %q", a)
	}
	if b := BackupName("ClusterServiceVersion", "other", "etcd.v1", "uid-1", 1); a == b {
		t.Errorf("a CSV of the same name in another namespace gets the same Backup %q", a)
	}
	if b := BackupName("ClusterServiceVersion", "ops", "etcd.v1", "uid-1", 0); a != b {
		t.Errorf("attempt 0 (a record written before attempts were counted) names %q, want the first attempt's %q", b, a)
	}
	// Later attempts: a name of their own, a DNS label of at most 63 characters.
	seen := map[string]bool{a: true}
	for _, owner := range []string{"etcd.v1", long} {
		for attempt := int32(2); attempt <= 12; attempt++ {
			got := BackupName("ClusterServiceVersion", "ops", owner, "uid-1", attempt)
			if !dnsLabel.MatchString(got) || len(got) > 63 || seen[got] {
				t.Errorf("attempt %d of %s: BackupName = %q (%d characters): not a new DNS label of at most 63", attempt, owner, got, len(got))
			}
			if !strings.HasSuffix(got, fmt.Sprintf("-%d", attempt)) {
				t.Errorf("attempt %d: BackupName = %q, want it to end in -%d", attempt, got, attempt)
			}
			seen[got] = true
		}
	}
}

func TestOwnerHash(t *testing.T) {
	a := OwnerHash("ClusterServiceVersion", "ops", "etcd.v1")
	if !dnsLabel.MatchString(a) || len(a) > 63 {
		t.Errorf("OwnerHash = %q: not a label value", a)
	}
	for _, other := range [][3]string{{"ClusterExtension", "ops", "etcd.v1"}, {"ClusterServiceVersion", "other", "etcd.v1"}, {"ClusterServiceVersion", "ops", "etcd.v2"}} {
		if OwnerHash(other[0], other[1], other[2]) == a {
			t.Errorf("OwnerHash%v = OwnerHash of another owner", other)
		}
	}
}

func TestBackupScopeOfKinds(t *testing.T) {
	widgets := CRDScope{Kind: "Widget.example.com", GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, Namespaced: true}
	gadgets := CRDScope{Kind: "Gadget.example.com", GVR: schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "gadgets"}, Namespaced: true}
	clusters := CRDScope{Kind: "Cluster.example.com", GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "clusters"}}
	role := Held{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Resource: "clusterroles", Name: "op"}
	secret := func(ns, name string) Held {
		return Held{Kind: "Secret", Resource: "secrets", Namespace: ns, Name: name}
	}
	ownedWidget := Held{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: "a", Name: "child"}
	tests := []struct {
		name       string
		kinds      []CRDScope
		targets    NamespaceSet
		others     []Held
		dependents []Held
		want       BackupContent
	}{
		{name: "no kind and nothing else: nothing to include", targets: AllNamespaces()},
		{
			name: "every namespace: the kinds everywhere", kinds: []CRDScope{widgets, gadgets}, targets: AllNamespaces(),
			want: BackupContent{Namespaces: []string{EveryNamespace}, WholeIn: []string{EveryNamespace},
				Whole: []WholeKind{{Resource: "gadgets.example.com", Namespaced: true}, {Resource: "widgets.example.com", Namespaced: true}}},
		},
		{
			name: "namespaced targets: those namespaces, never the \"\" beside them", kinds: []CRDScope{widgets}, targets: NewNamespaceSet([]string{"b", "", "a"}),
			want: BackupContent{Namespaces: []string{"a", "b"}, WholeIn: []string{"a", "b"}, Whole: []WholeKind{{Resource: "widgets.example.com", Namespaced: true}}},
		},
		{
			name: "a cluster-scoped kind names no namespace", kinds: []CRDScope{clusters}, targets: NewNamespaceSet([]string{"a"}),
			want: BackupContent{Whole: []WholeKind{{Resource: "clusters.example.com"}}},
		},
		{
			name: "the other deletions and the dependents by name, their namespaces added", kinds: []CRDScope{widgets}, targets: NewNamespaceSet([]string{"a"}),
			others: []Held{role}, dependents: []Held{secret("a", "s1"), secret("c", "s2")},
			want: BackupContent{Namespaces: []string{"a", "c"}, WholeIn: []string{"a"}, Whole: []WholeKind{{Resource: "widgets.example.com", Namespaced: true}},
				Named: []Held{role, secret("a", "s1"), secret("c", "s2")}},
		},
		{
			name: "a dependent of a kind taken whole there is not named", kinds: []CRDScope{widgets}, targets: NewNamespaceSet([]string{"a"}),
			dependents: []Held{ownedWidget, ownedWidget},
			want:       BackupContent{Namespaces: []string{"a"}, WholeIn: []string{"a"}, Whole: []WholeKind{{Resource: "widgets.example.com", Namespaced: true}}},
		},
		{
			name: "every namespace holds every dependent's namespace", kinds: []CRDScope{widgets}, targets: AllNamespaces(), dependents: []Held{secret("c", "s2")},
			want: BackupContent{Namespaces: []string{EveryNamespace}, WholeIn: []string{EveryNamespace}, Whole: []WholeKind{{Resource: "widgets.example.com", Namespaced: true}},
				Named: []Held{secret("c", "s2")}},
		},
		{
			name: "only other deletions", targets: AllNamespaces(), others: []Held{role},
			want: BackupContent{Named: []Held{role}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BackupScopeOfKinds(tt.kinds, tt.targets, tt.others, tt.dependents)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("BackupScopeOfKinds =\n%+v\nwant\n%+v", got, tt.want)
			}
			if got.Empty() != (len(tt.want.Whole) == 0 && len(tt.want.Named) == 0) {
				t.Errorf("Empty() = %v for %+v", got.Empty(), got)
			}
		})
	}
}

// TestBackupScopeOfKindsHoldsThePlan: whatever instances of the kinds the
// plan deletes in the targets, the Backup made before the plan takes them.
func TestBackupScopeOfKindsHoldsThePlan(t *testing.T) {
	widgets := CRDScope{Kind: "Widget.example.com", GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, Namespaced: true}
	planned := []Held{
		{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: "a", Name: "w1"},
		{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: "b", Name: "w2"},
	}
	for _, targets := range []NamespaceSet{AllNamespaces(), NewNamespaceSet([]string{"a", "b"})} {
		content := BackupScopeOfKinds([]CRDScope{widgets}, targets, nil, nil)
		for _, p := range planned {
			if !slices.Contains(content.Resources(), p.ResourceOf()) {
				t.Errorf("targets %v: the Backup lacks resource %s", targets, p.ResourceOf())
			}
			if !slices.Contains(content.WholeIn, p.Namespace) && !slices.Contains(content.WholeIn, EveryNamespace) {
				t.Errorf("targets %v: the Backup lacks namespace %s", targets, p.Namespace)
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
	widget := func(ns, name string) Held {
		return Held{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: ns, Name: name}
	}
	crd := Held{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Resource: "customresourcedefinitions", Name: "widgets.example.com"}
	cm := Held{Kind: "ConfigMap", Resource: "configmaps", Namespace: "a", Name: "c"}
	tests := []struct {
		name        string
		list        map[string][]string
		deletions   []Held
		wantMissing []Held
	}{
		{
			name:      "every deletion held, and more",
			list:      map[string][]string{"example.com/v1/Widget": {"a/w1", "b/w2", "b/other"}, "apiextensions.k8s.io/v1/CustomResourceDefinition": {"widgets.example.com"}, "v1/ConfigMap": {"a/c"}},
			deletions: []Held{widget("a", "w1"), widget("b", "w2"), crd, cm},
		},
		{
			name:      "held at another version of the kind",
			list:      map[string][]string{"example.com/v2/Widget": {"a/w1"}},
			deletions: []Held{widget("a", "w1")},
		},
		{
			name:        "an operand created after the backup began",
			list:        map[string][]string{"example.com/v1/Widget": {"a/w1"}},
			deletions:   []Held{widget("a", "w1"), widget("a", "late")},
			wantMissing: []Held{widget("a", "late")},
		},
		{
			name:        "the same name in another namespace is not the object",
			list:        map[string][]string{"example.com/v1/Widget": {"b/w1"}},
			deletions:   []Held{widget("a", "w1")},
			wantMissing: []Held{widget("a", "w1")},
		},
		{
			name:        "the same name of another group is not the object",
			list:        map[string][]string{"other.io/v1/Widget": {"a/w1"}},
			deletions:   []Held{widget("a", "w1")},
			wantMissing: []Held{widget("a", "w1")},
		},
		{
			name:        "an empty list holds nothing",
			deletions:   []Held{crd},
			wantMissing: []Held{crd},
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
	want := []Held{
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

// TestRetryBackup: a failed Backup is made again after a backoff that
// doubles with each attempt, up to an hour; an incomplete one also not
// before Velero has learnt the kinds again; the message says when, and the
// next Backup's name, and asks no one to delete anything.
func TestRetryBackup(t *testing.T) {
	created := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	failed := &Problem{Reason: cleanupv1alpha1.BlockedBackupFailed, Object: "Backup b", Message: "Velero's Backup b is Failed"}
	incomplete := &Problem{Reason: cleanupv1alpha1.BlockedBackupIncomplete, Object: "Widget a/w1", Message: "Velero's Backup b completed without 1 of the 3 objects"}
	tests := []struct {
		name    string
		problem *Problem
		attempt int32
		seen    time.Time
		want    time.Time
	}{
		{name: "failed, first attempt: 30 s", problem: failed, attempt: 1, seen: created.Add(time.Minute), want: created.Add(90 * time.Second)},
		{name: "failed, third attempt: 2 min", problem: failed, attempt: 3, seen: created.Add(time.Minute), want: created.Add(3 * time.Minute)},
		{name: "failed, many attempts: an hour at most", problem: failed, attempt: 40, seen: created, want: created.Add(time.Hour)},
		{name: "incomplete, first attempt: 30 s", problem: incomplete, attempt: 1, seen: created.Add(2 * time.Second), want: created.Add(32 * time.Second)},
		{name: "incomplete, fifth attempt: 8 min", problem: incomplete, attempt: 5, seen: created.Add(time.Minute), want: created.Add(9 * time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, p := RetryBackup(FailedBackup{Problem: tt.problem, Attempt: tt.attempt, Next: "b-2", Created: created, Seen: tt.seen})
			if !at.Equal(tt.want) {
				t.Errorf("RetryBackup at %s, want %s", at, tt.want)
			}
			if p.Reason != tt.problem.Reason || !strings.HasPrefix(p.Message, tt.problem.Message) || !strings.Contains(p.Message, "b-2") ||
				!strings.Contains(p.Message, tt.want.Format(time.RFC3339)) || strings.Contains(p.Message, "delete") {
				t.Errorf("RetryBackup's problem = %+v; want the reason kept, the next Backup and its time named, and no one asked to delete anything", p)
			}
			if tt.problem.Message != "Velero's Backup b is Failed" && tt.problem.Reason == cleanupv1alpha1.BlockedBackupFailed {
				t.Error("RetryBackup changed the problem it was given")
			}
		})
	}
}

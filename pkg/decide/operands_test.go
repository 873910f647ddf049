package decide

import (
	"slices"
	"sort"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

var me = types.NamespacedName{Namespace: "operators", Name: "widget.v1"}

// widgets is the owned CRD of the plan tests.
const widgets = "widgets.example.com"

// crd is widgets as OLM installed it for me: proven, established, storage version v1.
func crd(mut ...func(*apiextensionsv1.CustomResourceDefinition)) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: widgets, Annotations: map[string]string{ProvenanceAnnotationPrefix + "abc": me.String()}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta1", Served: true}, {Name: "v1", Served: true, Storage: true}},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
			{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}},
	}
	for _, m := range mut {
		m(c)
	}
	return c
}

func owned(names ...string) []operatorsv1alpha1.CRDDescription {
	var out []operatorsv1alpha1.CRDDescription
	for _, n := range names {
		out = append(out, operatorsv1alpha1.CRDDescription{Name: n, Kind: "Widget", Version: "v1"})
	}
	return out
}

func TestScopeCRDs(t *testing.T) {
	const w = widgets
	otherAll := OtherOwner{CSV: types.NamespacedName{Namespace: "x", Name: "y"}, Targets: NewNamespaceSet([]string{""})}
	tests := []struct {
		name        string
		in          ScopeInput
		wantKeep    string // KeepReason of the single scope; "-" when no scope
		wantProblem string
		wantVersion string
		wantProven  bool
	}{
		{"proven namespaced CRD is in scope", ScopeInput{CSV: me, Owned: owned(w), CRDs: map[string]*apiextensionsv1.CustomResourceDefinition{w: crd()}, CRDProvenance: cleanupv1alpha1.ProvenanceRequired},
			"", "", "v1", true},
		{"no provenance annotation: unproven", ScopeInput{CSV: me, Owned: owned(w), CRDs: map[string]*apiextensionsv1.CustomResourceDefinition{w: crd(func(c *apiextensionsv1.CustomResourceDefinition) { c.Annotations = nil })}, CRDProvenance: cleanupv1alpha1.ProvenanceRequired},
			cleanupv1alpha1.KeepUnproven, "", "v1", false},
		{"provenance of another CSV: unproven", ScopeInput{CSV: me, Owned: owned(w), CRDs: map[string]*apiextensionsv1.CustomResourceDefinition{w: crd(func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Annotations = map[string]string{ProvenanceAnnotationPrefix + "x": "other/widget.v1"}
		})}, CRDProvenance: cleanupv1alpha1.ProvenanceRequired}, cleanupv1alpha1.KeepUnproven, "", "v1", false},
		{"waived provenance", ScopeInput{CSV: me, Owned: owned(w), CRDs: map[string]*apiextensionsv1.CustomResourceDefinition{w: crd(func(c *apiextensionsv1.CustomResourceDefinition) { c.Annotations = nil })}, CRDProvenance: cleanupv1alpha1.ProvenanceWaived},
			"", "", "v1", true},
		{"CRD gone: noted", ScopeInput{CSV: me, Owned: owned(w), CRDProvenance: cleanupv1alpha1.ProvenanceRequired}, cleanupv1alpha1.NoteCRDNotFound, "", "", false},
		{"cluster-scoped CRD another CSV owns", ScopeInput{CSV: me, Owned: owned(w), CRDs: map[string]*apiextensionsv1.CustomResourceDefinition{w: crd(func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Scope = apiextensionsv1.ClusterScoped
		})}, OtherOwners: map[string][]OtherOwner{w: {otherAll}}, CRDProvenance: cleanupv1alpha1.ProvenanceRequired}, cleanupv1alpha1.KeepSharedClusterScoped, "", "v1", true},
		{"namespaced CRD another CSV owns stays in scope (spared per namespace)", ScopeInput{CSV: me, Owned: owned(w), CRDs: map[string]*apiextensionsv1.CustomResourceDefinition{w: crd()},
			OtherOwners: map[string][]OtherOwner{w: {otherAll}}, CRDProvenance: cleanupv1alpha1.ProvenanceRequired}, "", "", "v1", true},
		{"not established blocks", ScopeInput{CSV: me, Owned: owned(w), CRDs: map[string]*apiextensionsv1.CustomResourceDefinition{w: crd(func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Status.Conditions[0].Status = apiextensionsv1.ConditionFalse
		})}}, "-", cleanupv1alpha1.BlockedCRDNotEstablished, "", false},
		{"malformed owned name blocks", ScopeInput{CSV: me, Owned: owned("widgets")}, "-", cleanupv1alpha1.BlockedMalformedOwnedCRD, "", false},
		{"owned name not a DNS subdomain blocks", ScopeInput{CSV: me, Owned: owned("Widgets.Example_Com")}, "-", cleanupv1alpha1.BlockedMalformedOwnedCRD, "", false},
		{"storage version not served: first served", ScopeInput{CSV: me, Owned: owned(w), CRDs: map[string]*apiextensionsv1.CustomResourceDefinition{w: crd(func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[1].Served = false
		})}, CRDProvenance: cleanupv1alpha1.ProvenanceRequired}, "", "", "v1beta1", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scopes, problems := ScopeCRDs(tt.in)
			gotProblem := ""
			if len(problems) > 0 {
				gotProblem = problems[0].Reason
				if problems[0].Message == "" || problems[0].Object == "" {
					t.Errorf("a problem must name the object and say what to do: %+v", problems[0])
				}
			}
			if gotProblem != tt.wantProblem {
				t.Fatalf("problem = %q, want %q", gotProblem, tt.wantProblem)
			}
			if tt.wantKeep == "-" {
				if len(scopes) != 0 {
					t.Fatalf("scopes = %+v, want none", scopes)
				}
				return
			}
			if len(scopes) != 1 {
				t.Fatalf("scopes = %+v, want one", scopes)
			}
			s := scopes[0]
			if s.KeepReason != tt.wantKeep || s.GVR.Version != tt.wantVersion || s.Proven != tt.wantProven {
				t.Errorf("scope = keep %q version %q proven %v; want %q %q %v", s.KeepReason, s.GVR.Version, s.Proven, tt.wantKeep, tt.wantVersion, tt.wantProven)
			}
		})
	}
}

func TestScopeCRDsDeduplicatesOwnedEntries(t *testing.T) {
	const w = widgets
	scopes, _ := ScopeCRDs(ScopeInput{CSV: me, Owned: owned(w, w), CRDs: map[string]*apiextensionsv1.CustomResourceDefinition{w: crd()}})
	if len(scopes) != 1 {
		t.Fatalf("an owned CRD listed twice must be planned once, got %d scopes", len(scopes))
	}
}

func item(ns, name string, created time.Time, mut ...func(*metav1.PartialObjectMetadata)) metav1.PartialObjectMetadata {
	o := metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name), CreationTimestamp: metav1.NewTime(created)}}
	for _, m := range mut {
		m(&o)
	}
	return o
}

func TestPlanOperands(t *testing.T) {
	deletion := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	before := deletion.Add(-time.Hour)
	terminating := func(o *metav1.PartialObjectMetadata) {
		o.DeletionTimestamp = &metav1.Time{Time: deletion}
		o.Finalizers = []string{"x/y"}
	}
	namespaced := CRDScope{Name: "widgets.example.com", Namespaced: true}
	shared := namespaced
	shared.Others = []OtherOwner{{Targets: NewNamespaceSet([]string{"both"})}}
	cluster := CRDScope{Name: "gizmos.example.com"}
	unproven := namespaced
	unproven.KeepReason = cleanupv1alpha1.KeepUnproven

	tests := []struct {
		name        string
		scope       CRDScope
		targets     []string
		items       []metav1.PartialObjectMetadata
		wantDelete  []string
		wantWaiting []string
		wantKept    map[string]int
		backed      NamespaceSet
	}{
		// The target namespaces widened after the backup was verified: what
		// it does not hold is kept, never deleted.
		{"a target namespace the verified backup does not hold", namespaced, []string{"a", "added"}, []metav1.PartialObjectMetadata{
			item("a", "w1", before), item("added", "w2", before)},
			[]string{"a/w1"}, nil, map[string]int{cleanupv1alpha1.KeepNotInBackup: 1}, BackedNamespaces(true, []string{"a"})},
		{"a backup of every namespace holds every target", namespaced, []string{"a", "added"}, []metav1.PartialObjectMetadata{
			item("a", "w1", before), item("added", "w2", before)},
			[]string{"a/w1", "added/w2"}, nil, map[string]int{}, BackedNamespaces(true, []string{EveryNamespace})},
		{"a cluster-scoped instance is held whatever the namespaces", cluster, []string{"a"}, []metav1.PartialObjectMetadata{item("", "g1", before)},
			[]string{"g1"}, nil, map[string]int{}, BackedNamespaces(true, []string{"a"})},
		{"in and outside the targets", namespaced, []string{"a", "b"}, []metav1.PartialObjectMetadata{
			item("a", "w1", before), item("b", "w2", before), item("c", "w3", before)},
			[]string{"a/w1", "b/w2"}, nil, map[string]int{cleanupv1alpha1.KeepOutsideTargets: 1}, nil},
		{"all namespaces", namespaced, []string{""}, []metav1.PartialObjectMetadata{item("a", "w1", before), item("z", "w2", before)},
			[]string{"a/w1", "z/w2"}, nil, map[string]int{}, nil},
		{"a namespace another CSV targets is spared", shared, []string{"mine", "both"}, []metav1.PartialObjectMetadata{
			item("mine", "w1", before), item("both", "w2", before)},
			[]string{"mine/w1"}, nil, map[string]int{cleanupv1alpha1.KeepSharedWithCSV: 1}, nil},
		{"created in a later second than the deletion", namespaced, []string{"a"}, []metav1.PartialObjectMetadata{
			item("a", "old", before), item("a", "new", deletion.Add(time.Second))},
			[]string{"a/old"}, nil, map[string]int{cleanupv1alpha1.KeepCreatedAfterDeletion: 1}, nil},
		// The API server stores both in whole seconds: an operand of the
		// deletion's second may be either side of it. Without the cluster as
		// it was at the deletion's revision (AtDeletion), it is kept as of
		// unknown age, never as created after.
		{"created in the deletion's second, no revision: kept as ambiguous", namespaced, []string{"a"}, []metav1.PartialObjectMetadata{
			item("a", "just-before", deletion), item("a", "a-second-before", deletion.Add(-time.Second))},
			[]string{"a/a-second-before"}, nil, map[string]int{cleanupv1alpha1.KeepCreatedInDeletionSecond: 1}, nil},
		{"terminating ones are waited for, not deleted again", namespaced, []string{"a"}, []metav1.PartialObjectMetadata{
			item("a", "w1", before, terminating), item("a", "w2", before)},
			[]string{"a/w2"}, []string{"a/w1"}, map[string]int{}, nil},
		{"cluster-scoped instances ignore targets", cluster, []string{"a"}, []metav1.PartialObjectMetadata{item("", "g1", before)},
			[]string{"g1"}, nil, map[string]int{}, nil},
		{"a kept CRD keeps every instance", unproven, []string{"a"}, []metav1.PartialObjectMetadata{item("a", "w1", before), item("b", "w2", before)},
			nil, nil, map[string]int{cleanupv1alpha1.KeepUnproven: 2}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := PlanOperands(OperandInput{Scope: tt.scope, Targets: NewNamespaceSet(tt.targets), DeletionTime: metav1.NewTime(deletion), Items: tt.items, Backed: tt.backed})
			if got := names(plan.Delete); !slices.Equal(got, tt.wantDelete) {
				t.Errorf("delete = %v, want %v", got, tt.wantDelete)
			}
			if got := names(plan.Terminating); !slices.Equal(got, tt.wantWaiting) {
				t.Errorf("terminating = %v, want %v", got, tt.wantWaiting)
			}
			if len(plan.Kept) != len(tt.wantKept) {
				t.Errorf("kept = %v, want %v", plan.Kept, tt.wantKept)
			}
			for k, v := range tt.wantKept {
				if plan.Kept[k] != v {
					t.Errorf("kept = %v, want %v", plan.Kept, tt.wantKept)
				}
			}
		})
	}
}

func TestBackedNamespaces(t *testing.T) {
	if BackedNamespaces(false, []string{"a"}) != nil || BackedNamespaces(true, nil) != nil {
		t.Error("BackedNamespaces narrows without a verified backup of namespaced operands")
	}
	if s := BackedNamespaces(true, []string{EveryNamespace}); !s.All() {
		t.Errorf("BackedNamespaces(*) = %v, want every namespace", s)
	}
	if s := BackedNamespaces(true, []string{"a", "b"}); !s.Has("a") || !s.Has("b") || s.Has("c") || s.All() {
		t.Errorf("BackedNamespaces(a, b) = %v", s)
	}
}

// TestDeletionSecond: an operand created in the deletion's own second is
// decided by the cluster as it was at the deletion's revision: there with
// its UID, it existed before (deleted); absent, it came after (kept); when
// the revision could not be read, its age is unknown (kept, its own reason).
func TestDeletionSecond(t *testing.T) {
	deletion := time.Date(2026, 11, 21, 10, 0, 0, 700_000_000, time.UTC)
	scope := CRDScope{Name: "widgets.example.com", Kind: "Widget.example.com", Namespaced: true}
	sameSecond := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC) // as the API server stores it
	for _, tt := range []struct {
		name       string
		created    time.Time
		atDeletion map[types.UID]bool
		wantAction string
		wantReason string
	}{
		{"an earlier second needs no revision", sameSecond.Add(-time.Second), nil, ActionDelete, DeleteOwnedOperand},
		{"a later second needs no revision", sameSecond.Add(time.Second), nil, ActionKeep, cleanupv1alpha1.KeepCreatedAfterDeletion},
		{"the same second, there at the deletion's revision: before", sameSecond, map[types.UID]bool{"a/w": true}, ActionDelete, DeleteOwnedOperand},
		{"the same second, absent at the deletion's revision: after", sameSecond, map[types.UID]bool{"a/w": false}, ActionKeep, cleanupv1alpha1.KeepCreatedAfterDeletion},
		{"the same second, no revision: ambiguous", sameSecond, nil, ActionKeep, cleanupv1alpha1.KeepCreatedInDeletionSecond},
		{"the same second, another object's answer only: ambiguous", sameSecond, map[types.UID]bool{"a/other": true}, ActionKeep, cleanupv1alpha1.KeepCreatedInDeletionSecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj := item("a", "w", tt.created)
			in := OperandInput{Scope: scope, Targets: NewNamespaceSet([]string{"a"}), DeletionTime: metav1.NewTime(deletion), AtDeletion: tt.atDeletion}
			got := DecideOperand(in, &obj)
			if got.Action != tt.wantAction || got.Reason != tt.wantReason {
				t.Errorf("DecideOperand = %s/%s, want %s/%s", got.Action, got.Reason, tt.wantAction, tt.wantReason)
			}
			inSecond := len(InDeletionSecond([]metav1.PartialObjectMetadata{obj}, metav1.NewTime(deletion))) == 1
			if want := tt.created.Equal(sameSecond); inSecond != want {
				t.Errorf("InDeletionSecond = %v, want %v", inSecond, want)
			}
		})
	}
}

func names(objs []metav1.PartialObjectMetadata) []string {
	var out []string
	for _, o := range objs {
		if o.Namespace == "" {
			out = append(out, o.Name)
		} else {
			out = append(out, o.Namespace+"/"+o.Name)
		}
	}
	sort.Strings(out)
	return out
}

func TestProvenance(t *testing.T) {
	got := Provenance(map[string]string{
		ProvenanceAnnotationPrefix + "1": "ns-1/csv-1",
		ProvenanceAnnotationPrefix + "2": "ns-2/csv-2/extra",
		ProvenanceAnnotationPrefix + "3": "no-slash",
		"other.io/installed-alongside-4": "ns-4/csv-4",
	})
	if len(got) != 1 || got[0] != (types.NamespacedName{Namespace: "ns-1", Name: "csv-1"}) {
		t.Errorf("Provenance = %v, want only ns-1/csv-1", got)
	}
}

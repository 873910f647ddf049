package olmv1

import (
	"time"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"

	"testing"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

var testExt = Extension{Name: "argocd", UID: "ext-uid"}

func ownerLabels(name string) map[string]string {
	return map[string]string{ExtensionOwnerKindLabel: ocv1.ClusterExtensionKind, ExtensionOwnerNameLabel: name}
}

func controllerOf(apiVersion, kind string, uid types.UID) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "x", UID: uid, Controller: &yes, BlockOwnerDeletion: &yes}
}

func meta(name string, lbls map[string]string, refs ...metav1.OwnerReference) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Name: name, UID: types.UID(name + "-uid"), Labels: lbls, OwnerReferences: refs}
}

func TestOwnershipOf(t *testing.T) {
	extRef := controllerOf("olm.operatorframework.io/v1", "ClusterExtension", testExt.UID)
	setRef := controllerOf("olm.operatorframework.io/v1", ClusterObjectSetKind, "set-uid")
	sets := map[types.UID]bool{"set-uid": true}
	notController := extRef
	notController.Controller = nil
	for _, tt := range []struct {
		name    string
		obj     *metav1.ObjectMeta
		want    Ownership
		problem bool
	}{
		{"the Helm applier's chain", meta("a", ownerLabels("argocd"), extRef), OwnedDirectly, false},
		{"the Boxcutter applier's chain", meta("a", ownerLabels("argocd"), setRef), OwnedThroughSet, false},
		{"a set the extension does not control", meta("a", ownerLabels("argocd"), controllerOf("olm.operatorframework.io/v1", ClusterObjectSetKind, "other-set")), NotOwned, false},
		{"labels only (helm.sh/resource-policy: keep)", meta("a", ownerLabels("argocd")), NotOwned, false},
		{"an ownerReference that is not the controller", meta("a", ownerLabels("argocd"), notController), NotOwned, false},
		{"another extension of the same name (another UID)", meta("a", ownerLabels("argocd"), controllerOf("olm.operatorframework.io/v1", "ClusterExtension", "old-uid")), NotOwned, false},
		{"the UID of a kind from another group", meta("a", ownerLabels("argocd"), controllerOf("example.com/v1", "ClusterExtension", testExt.UID)), NotOwned, false},
		{"the ownerReference with labels naming another extension", meta("a", ownerLabels("other"), extRef), NotOwned, true},
		{"the ownerReference without labels", meta("a", nil, extRef), NotOwned, true},
		{"through the set, labels naming another extension", meta("a", ownerLabels("other"), setRef), NotOwned, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, problem := OwnershipOf(tt.obj, "CustomResourceDefinition", testExt, sets)
			if got != tt.want || (problem != nil) != tt.problem {
				t.Fatalf("OwnershipOf = %v, problem %v; want %v, problem %v", got, problem, tt.want, tt.problem)
			}
			if problem != nil && problem.Reason != cleanupv1alpha1.BlockedOwnershipMismatch {
				t.Errorf("problem reason %s, want %s", problem.Reason, cleanupv1alpha1.BlockedOwnershipMismatch)
			}
		})
	}
}

func TestControlledSets(t *testing.T) {
	extRef := controllerOf("olm.operatorframework.io/v1", "ClusterExtension", testExt.UID)
	sets, problems := ControlledSets(testExt, []metav1.Object{
		meta("mine", ownerLabels("argocd"), extRef),
		meta("theirs", ownerLabels("other"), controllerOf("olm.operatorframework.io/v1", "ClusterExtension", "other-uid")),
		meta("mislabelled", ownerLabels("other"), extRef),
	})
	if len(sets) != 1 || !sets["mine-uid"] {
		t.Errorf("sets = %v, want only mine-uid", sets)
	}
	if len(problems) != 1 || problems[0].Object != "ClusterObjectSet mislabelled" {
		t.Errorf("problems = %v, want one for the mislabelled set", problems)
	}
}

func extCRD(name string, lbls map[string]string, establishedOK bool, refs ...metav1.OwnerReference) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: *meta(name, lbls, refs...), Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
		Names:    apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", Plural: "widgets"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true}}}}
	if establishedOK {
		c.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
	}
	return c
}

func TestScopeExtensionCRDs(t *testing.T) {
	extRef := controllerOf("olm.operatorframework.io/v1", "ClusterExtension", testExt.UID)
	scopes, problems := ScopeExtensionCRDs(ExtensionScopeInput{Extension: testExt, CRDs: []*apiextensionsv1.CustomResourceDefinition{
		extCRD("widgets.example.com", ownerLabels("argocd"), true, extRef),
		extCRD("gadgets.example.com", nil, true),
		extCRD("pending.example.com", ownerLabels("argocd"), false, extRef),
		extCRD("stolen.example.com", ownerLabels("other"), true, extRef),
	}})
	if len(scopes) != 1 || scopes[0].Name != "widgets.example.com" || !scopes[0].Proven || scopes[0].GVR.Resource != "widgets" || !scopes[0].Namespaced {
		t.Errorf("scopes = %+v, want widgets.example.com only, proven, namespaced", scopes)
	}
	reasons := map[string]string{}
	for _, p := range problems {
		reasons[p.Object] = p.Reason
	}
	want := map[string]string{
		"CustomResourceDefinition pending.example.com": cleanupv1alpha1.BlockedCRDNotEstablished,
		"CustomResourceDefinition stolen.example.com":  cleanupv1alpha1.BlockedOwnershipMismatch,
	}
	if len(reasons) != len(want) {
		t.Fatalf("problems = %v, want %v", reasons, want)
	}
	for k, v := range want {
		if reasons[k] != v {
			t.Errorf("problem for %s = %q, want %q", k, reasons[k], v)
		}
	}
}

func TestExtensionTargets(t *testing.T) {
	ext := func(inline string) *ocv1.ClusterExtension {
		e := &ocv1.ClusterExtension{}
		e.Name = "argocd"
		if inline != "" {
			e.Spec.Config = &ocv1.ClusterExtensionConfig{ConfigType: ocv1.ClusterExtensionConfigTypeInline, Inline: &apiextensionsv1.JSON{Raw: []byte(inline)}}
		}
		return e
	}
	orphan := decide.Settings{CRDs: cleanupv1alpha1.Orphan}
	for _, tt := range []struct {
		name     string
		ext      *ocv1.ClusterExtension
		settings decide.Settings
		want     []string // nil: every namespace
		problem  bool
	}{
		{"no configuration: every namespace", ext(""), orphan, nil, false},
		{"a watch namespace", ext(`{"watchNamespace":"team-a"}`), orphan, []string{"team-a"}, false},
		{"an empty watch namespace", ext(`{"watchNamespace":""}`), orphan, nil, false},
		{"a null watch namespace", ext(`{"watchNamespace":null}`), orphan, nil, false},
		{"crds: Delete takes every namespace", ext(`{"watchNamespace":"team-a"}`), decide.Settings{CRDs: cleanupv1alpha1.Delete}, nil, false},
		{"no namespace name", ext(`{"watchNamespace":"Team A"}`), orphan, nil, true},
		{"not a string", ext(`{"watchNamespace":["a","b"]}`), orphan, nil, true},
		{"not an object", ext(`["a"]`), orphan, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, problem := ExtensionTargets(tt.ext, tt.settings)
			if (problem != nil) != tt.problem {
				t.Fatalf("problem = %v, want one: %v", problem, tt.problem)
			}
			if problem != nil {
				if problem.Reason != cleanupv1alpha1.BlockedTargetNamespacesUnknown || got != nil {
					t.Errorf("problem %s with targets %v, want %s and none", problem.Reason, got, cleanupv1alpha1.BlockedTargetNamespacesUnknown)
				}
				return
			}
			if tt.want == nil {
				if !got.All() {
					t.Errorf("targets %v, want every namespace", got)
				}
				return
			}
			if got.All() || !got.Has(tt.want[0]) || got.Has("team-b") {
				t.Errorf("targets %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClassifyExtension(t *testing.T) {
	for _, tt := range []struct {
		finalizers []string
		cascade    Cascade
		skip       string
	}{
		{[]string{"olm.operatorframework.io/cleanup-unpack-cache", decide.DefaultFinalizer}, CascadeBackground, ""},
		{[]string{metav1.FinalizerOrphanDependents, decide.DefaultFinalizer}, CascadeOrphan, cleanupv1alpha1.ReasonOrphanCascade},
		{[]string{metav1.FinalizerDeleteDependents, decide.DefaultFinalizer}, CascadeForeground, ""},
	} {
		t.Run(string(tt.cascade), func(t *testing.T) {
			v := ClassifyExtension(tt.finalizers)
			if v.Cascade != tt.cascade || v.SkipReason != tt.skip || v.Message == "" {
				t.Errorf("ClassifyExtension = %+v, want cascade %s, skip %q and a message", v, tt.cascade, tt.skip)
			}
		})
	}
}

func TestExtensionCRDFate(t *testing.T) {
	live := decide.CRDScope{Name: "widgets.example.com", CRD: &apiextensionsv1.CustomResourceDefinition{}}
	terminating := decide.CRDScope{Name: "widgets.example.com", CRD: &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{Time: time.Unix(1, 0)}}}}
	for _, tt := range []struct {
		name      string
		scope     decide.CRDScope
		crds      cleanupv1alpha1.Action
		instances bool
		action    string
		reason    string
	}{
		{"crds: Orphan detaches it", live, cleanupv1alpha1.Orphan, false, decide.ActionKeep, cleanupv1alpha1.KeepPolicyOrphan},
		{"crds: Delete with instances left keeps it", live, cleanupv1alpha1.Delete, true, decide.ActionKeep, cleanupv1alpha1.KeepHasInstances},
		{"crds: Delete with none left leaves it to the garbage collector", live, cleanupv1alpha1.Delete, false, decide.ActionDelete, decide.DeleteGarbageCollected},
		{"already being deleted (foreground): it goes, crds: Orphan or not", terminating, cleanupv1alpha1.Orphan, true, decide.ActionDelete, decide.DeleteTerminating},
		{"already being deleted, crds: Delete", terminating, cleanupv1alpha1.Delete, false, decide.ActionDelete, decide.DeleteTerminating},
	} {
		t.Run(tt.name, func(t *testing.T) {
			scope := tt.scope
			it := ExtensionCRDFate(decide.Settings{CRDs: tt.crds}, scope, tt.instances)
			if it.Action != tt.action || it.Reason != tt.reason || it.Kind != decide.CRDKind || it.Name != scope.Name {
				t.Errorf("ExtensionCRDFate = %+v, want %s %s", it, tt.action, tt.reason)
			}
		})
	}
}

func TestDetachFromExtension(t *testing.T) {
	extRef := controllerOf("olm.operatorframework.io/v1", "ClusterExtension", testExt.UID)
	setRef := controllerOf("olm.operatorframework.io/v1", ClusterObjectSetKind, "set-uid")
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "keeper", UID: "cm-uid"}
	sets := map[types.UID]bool{"set-uid": true}
	lbls := ownerLabels("argocd")
	lbls["app"] = "argocd"

	d, needed := DetachFromExtension(meta("a", lbls, extRef, other), testExt, sets)
	if !needed || len(d.OwnerReferences) != 1 || d.OwnerReferences[0].UID != "cm-uid" || len(d.DropLabels) != 2 {
		t.Errorf("Helm chain: %+v (needed %v), want the ConfigMap's reference kept and both owner labels dropped", d, needed)
	}
	d, needed = DetachFromExtension(meta("a", ownerLabels("argocd"), setRef), testExt, sets)
	if !needed || len(d.OwnerReferences) != 0 {
		t.Errorf("Boxcutter chain: %+v (needed %v), want the set's reference gone", d, needed)
	}
	if _, needed = DetachFromExtension(meta("a", map[string]string{"app": "argocd"}, other), testExt, sets); needed {
		t.Error("an object already detached needs no edit")
	}
}

func TestSelectExtensionPolicy(t *testing.T) {
	policy := func(name string, prio int32, csvSel, extSel *metav1.LabelSelector) cleanupv1alpha1.CleanupPolicy {
		p := cleanupv1alpha1.CleanupPolicy{}
		p.Name, p.Spec.Priority, p.Spec.CSVSelector, p.Spec.ClusterExtensionSelector = name, prio, csvSel, extSel
		return p
	}
	all := &metav1.LabelSelector{}
	team := &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Bogus"}}}
	policies := []cleanupv1alpha1.CleanupPolicy{
		policy("csvs-only", 9, nil, nil),
		policy("every-extension", 0, nil, all),
		policy("team-a", 5, nil, team),
		policy("broken", 10, nil, bad),
	}
	sel, errs := SelectExtensionPolicy(policies, map[string]string{"team": "a"})
	if sel.Winner == nil || sel.Winner.Name != "team-a" || len(sel.Others) != 1 || len(errs) != 1 {
		t.Errorf("team a: winner %v, others %v, errs %v; want team-a over every-extension, the broken selector reported", sel.Winner, sel.Others, errs)
	}
	sel, _ = SelectExtensionPolicy(policies, nil)
	if sel.Winner == nil || sel.Winner.Name != "every-extension" {
		t.Errorf("unlabelled: winner %v, want every-extension (a policy without the selector selects no extension)", sel.Winner)
	}
	// A policy that selects extensions and has no csvSelector selects no CSV.
	if ok, _ := decide.Selects(&policies[1], nil, nil); ok {
		t.Error("every-extension selects CSVs, want none")
	}
	both := policy("both", 0, all, all)
	if ok, _ := decide.Selects(&both, nil, nil); !ok {
		t.Error("a policy with both selectors selects no CSV, want every CSV")
	}
	if ok, _ := decide.Selects(&policies[0], nil, nil); !ok {
		t.Error("a policy with neither selector selects no CSV, want every CSV (as before extensions)")
	}
}

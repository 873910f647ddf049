package decide

import (
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// TestGateOperands covers every precedence rule of the operand step, which
// the run and the plan both follow.
func TestGateOperands(t *testing.T) {
	groups := &Problem{Reason: cleanupv1alpha1.BlockedTooManyOperatorGroups}
	malformed := []Problem{{Reason: cleanupv1alpha1.BlockedMalformedOwnedCRD, Object: "a"}, {Reason: cleanupv1alpha1.BlockedCRDNotEstablished, Object: "b"}}
	targets := &Problem{Reason: cleanupv1alpha1.BlockedTargetNamespacesUnknown}
	deleteAll := Settings{Operands: cleanupv1alpha1.Delete}
	orphan := Settings{Operands: cleanupv1alpha1.Orphan}
	optedOut := Verdict{OptedOut: true}
	for _, tt := range []struct {
		name       string
		in         GateInput
		wantOrphan string
		wantReason string
	}{
		{"nothing wrong: decided one by one", GateInput{Settings: deleteAll}, "", ""},
		{"operands: Orphan keeps every operand", GateInput{Settings: orphan}, cleanupv1alpha1.KeepPolicyOrphan, ""},
		{"the opt-out annotation keeps every operand", GateInput{Verdict: optedOut, Settings: deleteAll}, cleanupv1alpha1.KeepOptedOut, ""},
		{"opted out and operands: Orphan: the CSV's own word first", GateInput{Verdict: optedOut, Settings: orphan}, cleanupv1alpha1.KeepOptedOut, ""},
		{"orphan wins over a malformed owned CRD", GateInput{Settings: orphan, Scope: malformed}, cleanupv1alpha1.KeepPolicyOrphan, ""},
		{"opt-out wins over unknown targets", GateInput{Verdict: optedOut, Settings: deleteAll, Targets: targets}, cleanupv1alpha1.KeepOptedOut, ""},
		{"OperatorGroups OLM cannot tell block even kept operands", GateInput{Settings: orphan, OperatorGroups: groups}, "", cleanupv1alpha1.BlockedTooManyOperatorGroups},
		{"OperatorGroups first of the problems", GateInput{Settings: deleteAll, OperatorGroups: groups, Scope: malformed, Targets: targets}, "", cleanupv1alpha1.BlockedTooManyOperatorGroups},
		{"a bad owned CRD before unknown targets", GateInput{Settings: deleteAll, Scope: malformed, Targets: targets}, "", cleanupv1alpha1.BlockedMalformedOwnedCRD},
		{"unknown targets block", GateInput{Settings: deleteAll, Targets: targets}, "", cleanupv1alpha1.BlockedTargetNamespacesUnknown},
	} {
		t.Run(tt.name, func(t *testing.T) {
			orphan, blocked := GateOperands(tt.in)
			if orphan != tt.wantOrphan {
				t.Errorf("orphan = %q, want %q", orphan, tt.wantOrphan)
			}
			reason := ""
			if blocked != nil {
				reason = blocked.Reason
			}
			if reason != tt.wantReason {
				t.Errorf("blocked = %q, want %q", reason, tt.wantReason)
			}
		})
	}
	if _, p := GateOperands(GateInput{Settings: deleteAll, Scope: malformed}); p.Object != "a, b" {
		t.Errorf("joined problems name %q, want every object", p.Object)
	}
}

// TestDecideOperand is the per-object precedence: operands kept whole, then
// the CRD's keep reason, then the instance's own, then the timeout.
func TestDecideOperand(t *testing.T) {
	deletion := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	before := deletion.Add(-time.Hour)
	scope := CRDScope{Name: "widgets.example.com", Kind: "Widget.example.com", Namespaced: true}
	unproven := scope
	unproven.KeepReason = cleanupv1alpha1.KeepUnproven
	shared := scope
	shared.Others = []OtherOwner{{Targets: NewNamespaceSet([]string{"a"})}}
	terminating := func(o *metav1.PartialObjectMetadata) { o.DeletionTimestamp = &metav1.Time{Time: deletion} }
	past := func(on cleanupv1alpha1.TimeoutAction) Timeout { return Timeout{Passed: true, OnTimeout: on} }
	for _, tt := range []struct {
		name        string
		scope       CRDScope
		orphan      string
		timeout     Timeout
		obj         metav1.PartialObjectMetadata
		wantAction  string
		wantReasons string
	}{
		{"an owned operand in the targets", scope, "", Timeout{}, item("a", "w", before), ActionDelete, DeleteOwnedOperand},
		{"orphan wins over everything", unproven, cleanupv1alpha1.KeepOptedOut, Timeout{}, item("z", "w", deletion), ActionKeep, cleanupv1alpha1.KeepOptedOut},
		{"the CRD's keep reason wins over the instance's", unproven, "", Timeout{}, item("z", "w", deletion), ActionKeep, cleanupv1alpha1.KeepUnproven},
		{"outside the targets wins over created after", scope, "", Timeout{}, item("z", "w", deletion), ActionKeep, cleanupv1alpha1.KeepOutsideTargets},
		{"another owner's target wins over created after", shared, "", Timeout{}, item("a", "w", deletion), ActionKeep, cleanupv1alpha1.KeepSharedWithCSV},
		{"created after the deletion", scope, "", Timeout{}, item("a", "w", deletion.Add(time.Second)), ActionKeep, cleanupv1alpha1.KeepCreatedAfterDeletion},
		{"created in the deletion's second, unknown age", scope, "", Timeout{}, item("a", "w", deletion), ActionKeep, cleanupv1alpha1.KeepCreatedInDeletionSecond},
		{"created after wins over the timeout", scope, "", past(cleanupv1alpha1.TimeoutOrphan), item("a", "w", deletion.Add(time.Second), terminating), ActionKeep, cleanupv1alpha1.KeepCreatedAfterDeletion},
		{"terminating, before the timeout", scope, "", Timeout{OnTimeout: cleanupv1alpha1.TimeoutOrphan}, item("a", "w", before, terminating), ActionDelete, DeleteTerminating},
		{"terminating past the timeout, Wait", scope, "", past(cleanupv1alpha1.TimeoutWait), item("a", "w", before, terminating), ActionDelete, DeleteTerminating},
		{"terminating past the timeout, Orphan", scope, "", past(cleanupv1alpha1.TimeoutOrphan), item("a", "w", before, terminating), ActionKeep, cleanupv1alpha1.KeepTimedOut},
		{"terminating past the timeout, RemoveFinalizers", scope, "", past(cleanupv1alpha1.TimeoutRemoveFinalizers), item("a", "w", before, terminating), ActionDelete, DeleteRemoveFinalizers},
		{"a live operand past the timeout is deleted first", scope, "", past(cleanupv1alpha1.TimeoutOrphan), item("a", "w", before), ActionDelete, DeleteOwnedOperand},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := OperandInput{Scope: tt.scope, Targets: NewNamespaceSet([]string{"a"}), DeletionTime: metav1.NewTime(deletion), Orphan: tt.orphan, Timeout: tt.timeout}
			got := DecideOperand(in, &tt.obj)
			want := Item{Action: tt.wantAction, Kind: scope.Kind, Namespace: tt.obj.Namespace, Name: tt.obj.Name, Reason: tt.wantReasons}
			if got != want {
				t.Errorf("DecideOperand = %+v, want %+v", got, want)
			}
			p := PlanOperands(OperandInput{Scope: in.Scope, Targets: in.Targets, DeletionTime: in.DeletionTime, Orphan: in.Orphan, Timeout: in.Timeout, Items: []metav1.PartialObjectMetadata{tt.obj}})
			if len(p.Items) != 1 || p.Items[0] != want {
				t.Errorf("PlanOperands' item = %+v, want %+v", p.Items, want)
			}
			if kept := len(p.KeptRefs) == 1; kept != (want.Action == ActionKeep) || len(p.Delete)+len(p.Terminating)+len(p.KeptRefs) != 1 {
				t.Errorf("PlanOperands sorted the item wrongly: %+v", p)
			}
		})
	}
}

func TestCRDFate(t *testing.T) {
	proven := CRDScope{Name: "widgets.example.com", Proven: true}
	shared := proven
	shared.Others = []OtherOwner{{}}
	del := Settings{CRDs: cleanupv1alpha1.Delete}
	for _, tt := range []struct {
		name       string
		settings   Settings
		scope      CRDScope
		left       bool
		wantAction string
		wantReason string
	}{
		{"crds: Orphan keeps it, whatever else", Settings{CRDs: cleanupv1alpha1.Orphan}, proven, false, ActionKeep, cleanupv1alpha1.KeepPolicyOrphan},
		{"without provenance", del, CRDScope{Name: "x"}, false, ActionKeep, cleanupv1alpha1.KeepUnproven},
		{"unproven wins over shared and instances", del, CRDScope{Name: "x", Others: []OtherOwner{{}}}, true, ActionKeep, cleanupv1alpha1.KeepUnproven},
		{"another live CSV owns it", del, shared, true, ActionKeep, cleanupv1alpha1.KeepSharedCRD},
		{"instances left", del, proven, true, ActionKeep, cleanupv1alpha1.KeepHasInstances},
		{"installed alongside, nothing left", del, proven, false, ActionDelete, DeleteInstalledAlongside},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := CRDFate(tt.settings, tt.scope, tt.left)
			if got.Action != tt.wantAction || got.Reason != tt.wantReason || got.Kind != CRDKind || got.Name != tt.scope.Name {
				t.Errorf("CRDFate = %+v, want %s %s", got, tt.wantAction, tt.wantReason)
			}
		})
	}
}

func TestClusterObjectFate(t *testing.T) {
	s := Settings{ClusterRBAC: cleanupv1alpha1.Delete, Webhooks: cleanupv1alpha1.Orphan}
	if got := ClusterObjectFate(s, "ClusterRole.rbac.authorization.k8s.io", false); got.Action != ActionDelete || got.Reason != DeleteOwnerLabels {
		t.Errorf("cluster RBAC under clusterRBAC: Delete = %+v", got)
	}
	if got := ClusterObjectFate(s, "ValidatingWebhookConfiguration.admissionregistration.k8s.io", true); got.Action != ActionKeep || got.Reason != cleanupv1alpha1.KeepPolicyOrphan {
		t.Errorf("a webhook under webhooks: Orphan = %+v", got)
	}
}

func TestManaged(t *testing.T) {
	p := &cleanupv1alpha1.CleanupPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	csv := &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "op.v1"}}
	copied := csv.DeepCopy()
	copied.Labels = map[string]string{operatorsv1alpha1.CopiedLabelKey: "ops"}
	copied.Namespace = "elsewhere"
	copied.Annotations = map[string]string{"olm.operatorNamespace": "ops"}
	for _, tt := range []struct {
		name   string
		policy *cleanupv1alpha1.CleanupPolicy
		csv    metav1.Object
		want   bool
	}{
		{"selected", p, csv, true},
		{"no policy selects it", nil, csv, false},
		{"a copy, even selected", p, copied, false},
	} {
		if got := Managed(tt.policy, tt.csv); got != tt.want {
			t.Errorf("%s: Managed = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestTimeout(t *testing.T) {
	s := Settings{OperandTimeout: time.Minute, OnTimeout: cleanupv1alpha1.TimeoutWait}
	start := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	before, after := TimeoutOf(s, start, start.Add(59*time.Second)), TimeoutOf(s, start, start.Add(time.Minute))
	if before.Passed || !after.Passed {
		t.Fatalf("Passed = %v before, %v after", before.Passed, after.Passed)
	}
	if want := "onTimeout Wait applies once operandTimeout 1m0s has passed"; before.Then() != want {
		t.Errorf("before: %q, want %q", before.Then(), want)
	}
	if want := "operandTimeout 1m0s has passed and onTimeout Wait keeps waiting"; after.Then() != want {
		t.Errorf("after: %q, want %q", after.Then(), want)
	}
}

func TestClusterObjectItem(t *testing.T) {
	s := Settings{ClusterRBAC: cleanupv1alpha1.Delete, Webhooks: cleanupv1alpha1.Orphan}
	tests := []struct {
		name       string
		webhook    bool
		deleting   bool
		wantAction string
		wantReason string
	}{
		{name: "owned, in place: the uninstall deletes it", wantAction: ActionDelete, wantReason: DeleteOwnerLabels},
		{name: "owned, already being deleted: the uninstall waits for it", deleting: true, wantAction: ActionDelete, wantReason: DeleteTerminating},
		{name: "kept by the policy, deleting or not", webhook: true, deleting: true, wantAction: ActionKeep, wantReason: cleanupv1alpha1.KeepPolicyOrphan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ClusterObjectItem(s, "ClusterRole.rbac.authorization.k8s.io", tt.webhook, "r", tt.deleting)
			if got.Action != tt.wantAction || got.Reason != tt.wantReason || got.Name != "r" {
				t.Errorf("ClusterObjectItem = %+v, want %s %s", got, tt.wantAction, tt.wantReason)
			}
		})
	}
}

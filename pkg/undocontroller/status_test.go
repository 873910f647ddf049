package undocontroller

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/undo"
	"github.com/csv-cleaner/csv-cleaner/pkg/undoplan"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

func TestOptionsOf(t *testing.T) {
	csv := cleanupv1alpha1.UndoTarget{Kind: "ClusterServiceVersion", Namespace: "ops", Name: "op.v1"}
	for _, tc := range []struct {
		name    string
		spec    cleanupv1alpha1.UndoSpec
		wantErr string
		check   func(undo.Options) string
	}{
		{name: "a CSV, Velero's namespace defaulted", spec: cleanupv1alpha1.UndoSpec{Uninstall: csv},
			check: func(o undo.Options) string {
				if o.Owner != (decide.Owner{Kind: decide.KindCSV, Namespace: "ops", Name: "op.v1"}) || o.VeleroNamespace != cleanupv1alpha1.DefaultVeleroNamespace || !o.Selection.Empty() {
					return fmt.Sprintf("%+v", o)
				}
				return ""
			}},
		{name: "a ClusterExtension, beside its operator", spec: cleanupv1alpha1.UndoSpec{Uninstall: cleanupv1alpha1.UndoTarget{Kind: "ClusterExtension", Name: "ext"}, VeleroNamespace: "backups", BesideOperator: true},
			check: func(o undo.Options) string {
				if !o.Owner.Extension() || o.Owner.Name != "ext" || o.VeleroNamespace != "backups" || !o.BesideOperator {
					return fmt.Sprintf("%+v", o)
				}
				return ""
			}},
		{name: "only and a selector", spec: cleanupv1alpha1.UndoSpec{Uninstall: csv, Only: []string{"Widget/a/w1", "Cluster/c1"}, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"}}},
			check: func(o undo.Options) string {
				if len(o.Selection.Only) != 2 || o.Selection.Only[1] != (undoplan.ObjectName{Kind: "Cluster", Name: "c1"}) || o.Selection.Selector.String() != "tier=db" {
					return fmt.Sprintf("%+v", o.Selection)
				}
				return ""
			}},
		{name: "an empty selector selects everything", spec: cleanupv1alpha1.UndoSpec{Uninstall: csv, Selector: &metav1.LabelSelector{}},
			check: func(o undo.Options) string {
				if !o.Selection.Empty() {
					return "not empty"
				}
				return ""
			}},
		{name: "a malformed name is a selection error", spec: cleanupv1alpha1.UndoSpec{Uninstall: csv, Only: []string{"w1"}}, wantErr: "spec.only"},
		{name: "a malformed selector is a selection error", spec: cleanupv1alpha1.UndoSpec{Uninstall: csv, Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}}, wantErr: "spec.selector"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := optionsOf(&cleanupv1alpha1.Undo{Spec: tc.spec, Status: cleanupv1alpha1.UndoStatus{Restore: "r1"}})
			if tc.wantErr != "" {
				var sel *undo.SelectionError
				if !errors.As(err, &sel) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want a SelectionError naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Restore != "r1" || !o.Retry {
				t.Errorf("the Restore of the status is not followed, or not tried again when it failed: %q, retry %v", o.Restore, o.Retry)
			}
			if why := tc.check(o); why != "" {
				t.Error(why)
			}
		})
	}
}

func TestRecord(t *testing.T) {
	rows := []undoplan.Row{
		{Object: decide.Held{Group: "example.com", Kind: "Widget", Namespace: "a", Name: "w1"}, State: undoplan.StateRestored},
		{Object: decide.Held{Kind: "Secret", Namespace: "a", Name: "s1"}, State: undoplan.StateRestored, Owners: []string{"Widget.example.com a/w1"}},
		{Object: decide.Held{Kind: "ConfigMap", Namespace: "a", Name: "c1"}, State: undoplan.StatePresent, OwnersLeftOut: []string{"ClusterRole r: not restored"}},
		{Object: decide.Held{Kind: "PersistentVolumeClaim", Namespace: "a", Name: "p1"}, State: undoplan.StateRestored, Problem: "not bound to a volume"},
		{Object: decide.Held{Group: "example.com", Kind: "Widget", Namespace: "a", Name: "w2"}, State: undoplan.StateMissing},
	}
	t.Run("an ended undo: counts, what is not back, and its end", func(t *testing.T) {
		u := &cleanupv1alpha1.Undo{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
		res := &undo.Result{Outcome: undoplan.Outcome{Backup: "velero/b1", Restore: "b1-undo-1", RestorePhase: "Completed", Rows: rows}, Progress: &velero.Restore{Restored: 4, Total: 4}}
		v := undoplan.JudgeUndo(undoplan.UndoStep{Objects: len(rows), NotBack: res.Missing()})
		record(u, res, v)
		st := u.Status
		if st.Phase != cleanupv1alpha1.UndoPartiallyFailed || st.Objects != 5 || st.Restored != 3 || st.Present != 1 || st.Missing != 1 || st.OwnersLinked != 1 {
			t.Errorf("status %+v", st)
		}
		if len(st.NotBack) != 3 || st.NotBack[0].Name != "c1" || st.NotBack[1].Problem != "not bound to a volume" || st.NotBack[2].State != undoplan.StateMissing {
			t.Errorf("notBack %+v: want c1 (owners left out), p1 (a problem), w2 (missing)", st.NotBack)
		}
		if st.Backup != "velero/b1" || st.Restore != "b1-undo-1" || st.ItemsRestored != 4 || st.CompletionTime == nil {
			t.Errorf("status %+v", st)
		}
		c := meta.FindStatusCondition(st.Conditions, cleanupv1alpha1.UndoConditionComplete)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != cleanupv1alpha1.UndoReasonNotBack || c.ObservedGeneration != 1 {
			t.Errorf("condition %+v", c)
		}
	})
	t.Run("a Restore under way keeps the counts of the last ended step, and no end", func(t *testing.T) {
		u := &cleanupv1alpha1.Undo{}
		record(u, &undo.Result{Outcome: undoplan.Outcome{Backup: "velero/b1", Restore: "b1-undo-1", RestorePhase: "InProgress", Rows: rows}, UnderWay: true}, undoplan.JudgeUndo(undoplan.UndoStep{UnderWay: true}))
		if u.Status.Phase != cleanupv1alpha1.UndoInProgress || u.Status.Objects != 0 || u.Status.CompletionTime != nil || u.Status.Restore != "b1-undo-1" {
			t.Errorf("status %+v", u.Status)
		}
	})
	t.Run("a failed Restore blocks, keeping the Restore, its attempt and the counts of the last ended step; an old reinstall message is cleared", func(t *testing.T) {
		u := &cleanupv1alpha1.Undo{Status: cleanupv1alpha1.UndoStatus{Reinstall: "reinstall it", Phase: cleanupv1alpha1.UndoWaitingForReinstall}}
		failed := &velero.Restore{Name: "b1-undo-1-2", Phase: velero.RestoreFailedValidate, Attempt: 2}
		res := &undo.Result{Outcome: undoplan.Outcome{Backup: "velero/b1", Restore: failed.Name, RestorePhase: failed.Phase, Attempt: 2, Rows: rows}, Progress: failed}
		record(u, res, undoplan.JudgeUndo(undoplan.UndoStep{Blocked: "Restore b1-undo-1-2 ended FailedValidation", BlockedReason: cleanupv1alpha1.UndoReasonRestoreFailed}))
		st := u.Status
		if st.Phase != cleanupv1alpha1.UndoBlocked || st.Restore != failed.Name || st.Attempt != 2 || st.RestorePhase != velero.RestoreFailedValidate ||
			st.Objects != 0 || st.CompletionTime != nil || st.Reinstall != "" {
			t.Errorf("status %+v", st)
		}
		if c := meta.FindStatusCondition(st.Conditions, cleanupv1alpha1.UndoConditionComplete); c == nil || c.Reason != cleanupv1alpha1.UndoReasonRestoreFailed {
			t.Errorf("condition %+v", c)
		}
	})
	t.Run("status.notBack holds 50 objects at most; the counts are complete", func(t *testing.T) {
		var many []undoplan.Row
		for i := range 80 {
			many = append(many, undoplan.Row{Object: decide.Held{Kind: "Secret", Namespace: "a", Name: fmt.Sprint(i)}, State: undoplan.StateMissing})
		}
		u := &cleanupv1alpha1.Undo{}
		record(u, &undo.Result{Outcome: undoplan.Outcome{Rows: many}}, undoplan.JudgeUndo(undoplan.UndoStep{Objects: 80, NotBack: 80}))
		if len(u.Status.NotBack) != cleanupv1alpha1.MaxUndoObjects || u.Status.Missing != 80 {
			t.Errorf("%d listed, %d missing", len(u.Status.NotBack), u.Status.Missing)
		}
	})
}

package undocontroller

import (
	"cmp"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/undo"
	"github.com/csv-cleaner/csv-cleaner/pkg/undoplan"
)

// optionsOf is what the Undo asks pkg/undo to do. A selection that cannot
// be read is a *undo.SelectionError.
func optionsOf(u *cleanupv1alpha1.Undo) (undo.Options, error) {
	t := u.Spec.Uninstall
	o := undo.Options{
		Owner:           decide.Owner{Kind: t.Kind, Namespace: t.Namespace, Name: t.Name},
		VeleroNamespace: cmp.Or(u.Spec.VeleroNamespace, cleanupv1alpha1.DefaultVeleroNamespace),
		BesideOperator:  u.Spec.BesideOperator,
		Restore:         u.Status.Restore,
		Retry:           true,
	}
	for _, only := range u.Spec.Only {
		name, err := undoplan.ParseObjectName(only)
		if err != nil {
			return o, &undo.SelectionError{Err: fmt.Errorf("spec.only: %w", err)}
		}
		o.Selection.Only = append(o.Selection.Only, name)
	}
	if u.Spec.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(u.Spec.Selector)
		if err != nil {
			return o, &undo.SelectionError{Err: fmt.Errorf("spec.selector: %w", err)}
		}
		if !s.Empty() {
			o.Selection.Selector = s
		}
	}
	return o, nil
}

// record writes a step's result and verdict into the Undo's status.
func record(u *cleanupv1alpha1.Undo, res *undo.Result, v undoplan.UndoVerdict) {
	st := &u.Status
	st.Phase = v.Phase
	st.Reinstall = ""
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: cleanupv1alpha1.UndoConditionComplete, Status: conditionOf(v.Phase == cleanupv1alpha1.UndoCompleted),
		Reason: v.Reason, Message: v.Message, ObservedGeneration: u.Generation})
	if v.Phase.Ended() && st.CompletionTime == nil {
		now := metav1.Now()
		st.CompletionTime = &now
	}
	if res == nil {
		return
	}
	st.Backup = res.Backup
	if res.Restore != "" {
		st.Restore, st.RestorePhase, st.Attempt = res.Restore, res.RestorePhase, int32(res.Attempt)
	}
	if p := res.Progress; p != nil {
		st.ItemsRestored, st.TotalItems = p.Restored, p.Total
	}
	st.Binding = int32(res.Binding)
	if res.UnderWay || v.Phase == cleanupv1alpha1.UndoBlocked {
		return // the rows are where things stood before the Restore
	}
	counts := map[string]int32{}
	st.NotBack, st.OwnersLinked = nil, 0
	for _, row := range res.Rows {
		counts[row.State]++
		if len(row.Owners) > 0 {
			st.OwnersLinked++
		}
		notBack := row.NotBack()
		if (notBack || len(row.OwnersLeftOut) > 0) && len(st.NotBack) < cleanupv1alpha1.MaxUndoObjects {
			st.NotBack = append(st.NotBack, cleanupv1alpha1.UndoObject{Kind: row.Object.KindName(), Namespace: row.Object.Namespace, Name: row.Object.Name,
				State: row.State, Problem: row.Problem, OwnersLeftOut: row.OwnersLeftOut})
		}
	}
	st.Objects = int32(len(res.Rows))
	st.Restored, st.Present, st.Missing, st.Unread = counts[undoplan.StateRestored], counts[undoplan.StatePresent], counts[undoplan.StateMissing], counts[undoplan.StateUnread]
}

// conditionOf is a condition's status.
func conditionOf(b bool) metav1.ConditionStatus {
	if b {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

package undoplan

import (
	"testing"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

func TestJudgeUndo(t *testing.T) {
	for _, tc := range []struct {
		name   string
		step   UndoStep
		phase  cleanupv1alpha1.UndoPhase
		reason string
	}{
		{"no backup ends it, whatever else holds", UndoStep{NoBackup: "no verified backup", OperatorRunning: "x", UnderWay: true}, cleanupv1alpha1.UndoFailed, cleanupv1alpha1.UndoReasonNoBackup},
		{"a selection that names nothing ends it", UndoStep{InvalidSelection: "--only names nothing", OperatorRunning: "x"}, cleanupv1alpha1.UndoFailed, cleanupv1alpha1.UndoReasonInvalidSelection},
		{"the operator running blocks it", UndoStep{OperatorRunning: "Deployment ops/op has 1 replica", Objects: 3}, cleanupv1alpha1.UndoBlocked, cleanupv1alpha1.UndoReasonOperatorRunning},
		{"storage unavailable blocks it, with its reason", UndoStep{Blocked: "Velero's location is Unavailable", BlockedReason: cleanupv1alpha1.UndoReasonStorageUnavailable},
			cleanupv1alpha1.UndoBlocked, cleanupv1alpha1.UndoReasonStorageUnavailable},
		{"a failed Restore blocks it until the next attempt", UndoStep{Blocked: "Restore x ended FailedValidation", BlockedReason: cleanupv1alpha1.UndoReasonRestoreFailed, Objects: 3, NotBack: 3},
			cleanupv1alpha1.UndoBlocked, cleanupv1alpha1.UndoReasonRestoreFailed},
		{"a Restore under way", UndoStep{UnderWay: true, Objects: 3, NotBack: 3}, cleanupv1alpha1.UndoInProgress, cleanupv1alpha1.UndoReasonRestoring},
		{"the Restore ended, claims still made from their snapshots", UndoStep{UnderWay: true, Binding: 2, Objects: 3, NotBack: 2}, cleanupv1alpha1.UndoInProgress, cleanupv1alpha1.UndoReasonRestoring},
		{"something not back ends it partly failed", UndoStep{Objects: 3, NotBack: 1}, cleanupv1alpha1.UndoPartiallyFailed, cleanupv1alpha1.UndoReasonNotBack},
		{"everything back", UndoStep{Objects: 3}, cleanupv1alpha1.UndoCompleted, cleanupv1alpha1.UndoReasonCompleted},
		{"nothing to restore is complete", UndoStep{}, cleanupv1alpha1.UndoCompleted, cleanupv1alpha1.UndoReasonCompleted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := JudgeUndo(tc.step)
			if v.Phase != tc.phase || v.Reason != tc.reason || v.Message == "" {
				t.Errorf("JudgeUndo(%+v) = %+v, want %s/%s with a message", tc.step, v, tc.phase, tc.reason)
			}
			if v.Phase.Ended() != (tc.phase == cleanupv1alpha1.UndoFailed || tc.phase == cleanupv1alpha1.UndoPartiallyFailed || tc.phase == cleanupv1alpha1.UndoCompleted) {
				t.Errorf("phase %s ended = %v", v.Phase, v.Phase.Ended())
			}
		})
	}
}

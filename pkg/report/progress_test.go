package report

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// TestProgressLines: what a person following an undo reads, a line each
// time its Restore or its Undo moves on, and what a stall says.
func TestProgressLines(t *testing.T) {
	for _, tt := range []struct {
		name, got string
		want      []string
	}{
		{"a Restore under way", RestoreLine("velero", "r1", &velero.Restore{Phase: "InProgress", Restored: 3, Total: 8}),
			[]string{"Restore velero/r1: InProgress, 3 of 8 items restored"}},
		{"a new Restore", RestoreLine("velero", "r1", &velero.Restore{}), []string{"Restore velero/r1: New, 0 of 0 items restored"}},
		{"a Restore that failed", RestoreLine("velero", "r1", &velero.Restore{Phase: "FailedValidation", ValidationErrors: []string{"no backup"}}),
			[]string{"FailedValidation", "0 warnings, 0 errors", "no backup"}},
		{"a second attempt that failed for want of its storage", RestoreLine("velero", "r1-2", &velero.Restore{Phase: "FailedValidation", Attempt: 2,
			ValidationErrors: []string{"The BSL default is unavailable, cannot retrieve the backup"}}),
			[]string{"Restore velero/r1-2 (attempt 2): FailedValidation", "The BSL default is unavailable"}},
		{"an Undo blocked on its storage, after a first attempt", UndoLine(&cleanupv1alpha1.Undo{ObjectMeta: metav1.ObjectMeta{Name: "u1"}, Status: cleanupv1alpha1.UndoStatus{
			Phase: cleanupv1alpha1.UndoBlocked, Restore: "r1", RestorePhase: "Failed", Attempt: 1,
			Conditions: []metav1.Condition{{Type: cleanupv1alpha1.UndoConditionComplete, Reason: cleanupv1alpha1.UndoReasonRestoreFailed, Message: "Restore r1 ended Failed"}}}}),
			[]string{"Undo u1: Blocked (RestoreFailed), Restore r1: Failed"}},
		{"a stalled Restore", RestoreStalled("velero", "r1", &velero.Restore{Phase: "InProgress"}, 61*time.Second),
			[]string{"for 1m1s with no change", "counted nothing to restore yet", "velero restore logs r1"}},
		{"an Undo retrying", UndoLine(&cleanupv1alpha1.Undo{ObjectMeta: metav1.ObjectMeta{Name: "u1"}, Status: cleanupv1alpha1.UndoStatus{
			Phase: cleanupv1alpha1.UndoInProgress, Restore: "r1", RestorePhase: "InProgress", ItemsRestored: 2, TotalItems: 4,
			Conditions: []metav1.Condition{{Type: cleanupv1alpha1.UndoConditionComplete, Reason: cleanupv1alpha1.UndoReasonRetrying, Message: "Velero is down"}}}}),
			[]string{"Undo u1: InProgress, Restore r1: InProgress, 2 of 4 items restored: Velero is down"}},
		{"an Undo waiting for claims made from their snapshots", UndoLine(&cleanupv1alpha1.Undo{ObjectMeta: metav1.ObjectMeta{Name: "u1"}, Status: cleanupv1alpha1.UndoStatus{
			Phase: cleanupv1alpha1.UndoInProgress, Restore: "r1", RestorePhase: "Completed", ItemsRestored: 4, TotalItems: 4, Binding: 15}}),
			[]string{"Undo u1: InProgress, Restore r1: Completed, 4 of 4 items restored; 15 restored claims being bound to volumes made from their snapshots"}},
		{"a stalled Undo", UndoStalled(&cleanupv1alpha1.Undo{ObjectMeta: metav1.ObjectMeta{Name: "u1"}}, time.Minute),
			[]string{"Undo u1: New for 1m0s with no change", "kubectl describe undo u1"}},
	} {
		for _, w := range tt.want {
			if !strings.Contains(tt.got, w) {
				t.Errorf("%s: %q lacks %q", tt.name, tt.got, w)
			}
		}
	}
}

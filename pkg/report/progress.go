package report

import (
	"k8s.io/apimachinery/pkg/api/meta"

	"cmp"
	"fmt"
	"time"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"

	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// RestoreLine is the progress line of Velero's Restore namespace/name as
// last read (r): its phase and items, and once it ended its warnings,
// errors and why it failed.
func RestoreLine(namespace, name string, r *velero.Restore) string {
	line := fmt.Sprintf("Restore %s/%s%s: %s, %d of %d items restored", namespace, name, attemptOf(int(r.Attempt)), cmp.Or(r.Phase, "New"), r.Restored, r.Total)
	if r.Ended() {
		line += fmt.Sprintf(", %d warnings, %d errors", r.Warnings, r.Errors)
		if r.Failed() || r.FailureReason != "" || len(r.ValidationErrors) > 0 {
			line += ": " + r.Why()
		}
	}
	return line
}

// attemptOf says which attempt a Restore is, after the first.
func attemptOf(attempt int) string {
	if attempt < 2 {
		return ""
	}
	return fmt.Sprintf(" (attempt %d)", attempt)
}

// RestoreStalled says that a Restore has not moved for still, and what
// Velero is likely waiting on.
func RestoreStalled(namespace, name string, r *velero.Restore, still time.Duration) string {
	what := fmt.Sprintf("it has restored %d of %d items; a claim's volume is made from its snapshot and looked at every 10 s", r.Restored, r.Total)
	if r.Total == 0 {
		what = "it has counted nothing to restore yet: Velero waits for its caches of the kinds it restores, and for good on a kind at a version the API server does not serve"
	}
	return fmt.Sprintf("Restore %s/%s: %s for %s with no change: %s; velero restore describe %s and velero restore logs %s say more",
		namespace, name, cmp.Or(r.Phase, "New"), still.Round(time.Second), what, name, name)
}

// UndoLine is the progress line of an Undo as last read: its phase, its
// Restore's, and why it is retrying.
func UndoLine(u *cleanupv1alpha1.Undo) string {
	st := u.Status
	line := fmt.Sprintf("Undo %s: %s", u.Name, cmp.Or(string(st.Phase), "New"))
	cond := meta.FindStatusCondition(st.Conditions, cleanupv1alpha1.UndoConditionComplete)
	if st.Phase == cleanupv1alpha1.UndoBlocked && cond != nil {
		line += " (" + cond.Reason + ")"
	}
	if st.Restore != "" {
		line += fmt.Sprintf(", Restore %s%s: %s, %d of %d items restored", st.Restore, attemptOf(int(st.Attempt)), cmp.Or(st.RestorePhase, "New"), st.ItemsRestored, st.TotalItems)
	}
	if st.Binding > 0 && st.Phase == cleanupv1alpha1.UndoInProgress {
		line += fmt.Sprintf("; %d restored claims being bound to volumes made from their snapshots", st.Binding)
	}
	if cond != nil && cond.Reason == cleanupv1alpha1.UndoReasonRetrying {
		line += ": " + cond.Message
	}
	return line
}

// UndoStalled says that an Undo without a Restore has not moved for still.
func UndoStalled(u *cleanupv1alpha1.Undo, still time.Duration) string {
	return fmt.Sprintf("Undo %s: %s for %s with no change (kubectl describe undo %s, and csv-cleaner's log, say more)",
		u.Name, cmp.Or(string(u.Status.Phase), "New"), still.Round(time.Second), u.Name)
}

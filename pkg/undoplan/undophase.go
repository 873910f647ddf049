package undoplan

import (
	"fmt"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// UndoStep is what one step of an undo found (pkg/undo.Step), in neutral terms.
type UndoStep struct {
	// OperatorRunning says which operator runs beside the undo; NoBackup,
	// why no verified Backup of the uninstall was found; InvalidSelection,
	// why the selection cannot be made. Each is "" when it does not hold.
	OperatorRunning, NoBackup, InvalidSelection string
	// Blocked says why the undo cannot go on now (Velero's storage location
	// is not Available, or its Restore failed) and what to do;
	// BlockedReason is the Undo's reason for it. It goes on by itself.
	Blocked, BlockedReason string
	// UnderWay: the Restore has not ended, or Binding of the claims it
	// restored are still being made from their snapshots.
	UnderWay bool
	Binding  int
	// Objects counts what the undo restores; NotBack, those not back as
	// they were or not known to be.
	Objects, NotBack int
}

// UndoVerdict is where an undo stands after a step: its phase, and the
// reason and message of its Complete condition.
type UndoVerdict struct {
	Phase           cleanupv1alpha1.UndoPhase
	Reason, Message string
}

// JudgeUndo says where an undo stands after a step. Nothing found to
// restore from, and a selection that names nothing the uninstall destroyed,
// end it (Failed: nothing was restored); the operator running, Velero's
// storage unavailable or a failed Restore block it until they no longer
// hold; a Restore under way, restore; else it ended, Completed when
// everything is back.
func JudgeUndo(s UndoStep) UndoVerdict {
	switch {
	case s.NoBackup != "":
		return UndoVerdict{cleanupv1alpha1.UndoFailed, cleanupv1alpha1.UndoReasonNoBackup, s.NoBackup + "; nothing was restored"}
	case s.InvalidSelection != "":
		return UndoVerdict{cleanupv1alpha1.UndoFailed, cleanupv1alpha1.UndoReasonInvalidSelection, s.InvalidSelection + "; nothing was restored: create another Undo"}
	case s.OperatorRunning != "":
		return UndoVerdict{cleanupv1alpha1.UndoBlocked, cleanupv1alpha1.UndoReasonOperatorRunning, s.OperatorRunning}
	case s.Blocked != "":
		return UndoVerdict{cleanupv1alpha1.UndoBlocked, s.BlockedReason, s.Blocked}
	case s.UnderWay && s.Binding > 0:
		return UndoVerdict{cleanupv1alpha1.UndoInProgress, cleanupv1alpha1.UndoReasonRestoring,
			fmt.Sprintf("Velero's Restore ended; %d restored claims are being bound to volumes made from their snapshots", s.Binding)}
	case s.UnderWay:
		return UndoVerdict{cleanupv1alpha1.UndoInProgress, cleanupv1alpha1.UndoReasonRestoring, "Velero's Restore is under way (status.restore)"}
	case s.NotBack > 0:
		return UndoVerdict{cleanupv1alpha1.UndoPartiallyFailed, cleanupv1alpha1.UndoReasonNotBack,
			fmt.Sprintf("%d of the %d objects the undo restores are not back as they were, or could not be checked (status.notBack)", s.NotBack, s.Objects)}
	}
	return UndoVerdict{cleanupv1alpha1.UndoCompleted, cleanupv1alpha1.UndoReasonCompleted,
		fmt.Sprintf("all %d objects the undo restores are back, their owners linked again", s.Objects)}
}

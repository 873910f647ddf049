package cleanup

import (
	"fmt"
	"time"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// noteBackup keeps in the record the Backup of attempt as csv-cleaner last
// read it. Its items are written when its phase changes, not at every
// look: a record written at every poll of a running backup would cost
// more than it tells.
func (u *Uninstall) noteBackup(namespace, name string, attempt int32, phase string, items int64) *cleanupv1alpha1.BackupStatus {
	st := u.rec.st.Backup
	if st == nil || st.Name != name || st.Namespace != namespace {
		st = &cleanupv1alpha1.BackupStatus{Tool: cleanupv1alpha1.BackupToolVelero, Namespace: namespace, Name: name, Attempt: attempt}
		if old := u.rec.st.Backup; old != nil && old.Namespace == namespace {
			st.Namespaces = old.Namespaces
		}
		u.rec.st.Backup = st
	}
	if st.Phase != phase {
		st.Phase, st.Items = phase, int32(min(items, 1<<31-1))
	}
	return st
}

// waitOnBackup says what the pass waits for, and looks again in a
// fiftieth of the time the backup has taken so far.
func (u *Uninstall) waitOnBackup(msg string, running time.Duration) {
	u.waitNote = msg
	u.poll = backupPoll(running)
}

// backupPoll is when to look again at a Backup running for so long.
func backupPoll(running time.Duration) time.Duration {
	return min(max(running/backupPollDiv, backupPollMin), backupPollMax)
}

// phaseOrNew is a Backup's phase, New before Velero has set one.
func phaseOrNew(phase string) string {
	if phase == "" {
		return decide.BackupPhaseNew
	}
	return phase
}

// undoCommand is how a person undoes the uninstall, once its operator is reinstalled.
func (u *Uninstall) undoCommand() string {
	return UndoCommand(u.kind, u.subject.GetNamespace(), u.subject.GetName())
}

// UndoCommand is the command that undoes the uninstall of an owner of kind.
func UndoCommand(kind RecordKind, namespace, name string) string { return kind.undo(namespace, name) }

// undoNote is what a Completed record and Event say of the backup that
// gated the uninstall.
func undoNote(kind RecordKind, namespace, name string, st *cleanupv1alpha1.UninstallStatus) string {
	b := st.Backup
	if b == nil || !b.Verified || b.Name == "" || b.Planned == 0 {
		return ""
	}
	return fmt.Sprintf("; Velero's Backup %s/%s holds everything it destroyed: to undo, reinstall the operator, then %s (or kubectl csv-cleaner undo)", b.Namespace, b.Name, UndoCommand(kind, namespace, name))
}

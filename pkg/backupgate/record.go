package backupgate

import (
	"time"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// noteBackup keeps in the record the Backup of attempt as csv-cleaner last
// read it. Its items are written when its phase changes, not at every
// look: a record written at every poll of a running backup would cost
// more than it tells.
func (g *Gate) noteBackup(namespace, name string, attempt int32, phase string, items int64) *cleanupv1alpha1.BackupStatus {
	st := g.out.Backup
	if st == nil || st.Name != name || st.Namespace != namespace {
		st = &cleanupv1alpha1.BackupStatus{Tool: cleanupv1alpha1.BackupToolVelero, Namespace: namespace, Name: name, Attempt: attempt}
		if old := g.out.Backup; old != nil && old.Namespace == namespace {
			st.Namespaces, st.LastFailure, st.Expected = old.Namespaces, old.LastFailure, old.Expected
		}
		g.out.Backup = st
	}
	if st.Phase != phase {
		st.Phase, st.Items = phase, int32(min(items, 1<<31-1))
	}
	return st
}

// waitOnBackup says what the pass waits for, and looks again in a
// fiftieth of the time the backup has taken so far.
func (g *Gate) waitOnBackup(msg string, running time.Duration) {
	g.wait(msg, decide.VeleroPoll(running))
}

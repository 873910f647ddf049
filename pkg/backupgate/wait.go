package backupgate

import (
	"context"
	"fmt"
	"time"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// Running is the cheap look at the Backup a record waits on (st, of the
// owner of kind, namespace, name and uid, under the policy's velero
// settings v): ok means Velero still runs it at the phase the record saw,
// and requeue is when to look again (a fiftieth of its age). Anything else
// is for a full pass; err says why the Backup could not be read.
func (g Gate) Running(ctx context.Context, v *cleanupv1alpha1.VeleroBackup, st *cleanupv1alpha1.BackupStatus, owner decide.Owner) (requeue time.Duration, ok bool, err error) {
	if st == nil || st.Verified || st.RetryTime != nil || st.Namespace != v.Namespace {
		return 0, false, nil
	}
	name := owner.BackupName(max(st.Attempt, 1))
	if st.Name != name {
		return 0, false, nil
	}
	backup, err := g.veleroOf(v).Backup(ctx, name)
	if err != nil {
		return 0, false, fmt.Errorf("reading the Backup for its wait: %w", err)
	}
	if backup == nil || backup.Phase != st.Phase || !decide.GateOnBackup(name, backup.Phase).Wait {
		return 0, false, nil
	}
	return decide.VeleroPoll(time.Since(backup.Created)), true, nil
}

package cleanup

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// WaitingOnBackup is the cheap pass of an uninstall whose record waits on a
// Backup Velero still runs: ok means it still runs and requeue is when to
// look again (a fiftieth of its age). Anything else is for a full pass.
func (e *Engine) WaitingOnBackup(ctx context.Context, kind RecordKind, owner client.Object, settings decide.Settings) (requeue time.Duration, ok bool) {
	b := settings.Backup
	if b == nil || b.Velero == nil || e.pending.has(owner.GetUID()) {
		return 0, false
	}
	log := logr.FromContextOrDiscard(ctx)
	obj := kind.empty()
	if err := e.APIReader.Get(ctx, client.ObjectKeyFromObject(owner), obj); err != nil {
		log.V(1).Info("Reading the uninstall record for the backup's wait failed: a full pass follows", "error", err.Error())
		return 0, false
	}
	rec := newRecord(obj)
	st := rec.st.Backup
	if rec.uid != owner.GetUID() || rec.st.Policy != settings.Policy || rec.st.Phase != cleanupv1alpha1.PhaseDeleting ||
		st == nil || st.Verified || st.RetryTime != nil || st.Namespace != b.Velero.Namespace {
		return 0, false
	}
	name := decide.BackupName(kind.Subject.Kind, owner.GetNamespace(), owner.GetName(), owner.GetUID(), max(st.Attempt, 1))
	if st.Name != name {
		return 0, false
	}
	backup, err := e.veleroOf(b.Velero).Backup(ctx, name)
	if err != nil {
		log.V(1).Info("Reading the Backup for its wait failed: a full pass follows", "error", err.Error())
		return 0, false
	}
	if backup == nil || backup.Phase != st.Phase || !decide.GateOnBackup(name, backup.Phase).Wait {
		return 0, false
	}
	return backupPoll(time.Since(backup.Created)), true
}

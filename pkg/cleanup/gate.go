package cleanup

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/backupgate"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
	"github.com/csv-cleaner/csv-cleaner/pkg/gather"
)

// gather is the engine's Gatherer.
func (e *Engine) gather() gather.Gatherer {
	return gather.Gatherer{Live: e.APIReader, Cached: e.Client}
}

// gate is the backup gate with the engine's clients and its Backups' plans.
func (e *Engine) gate() backupgate.Gate {
	return backupgate.Gate{Live: e.APIReader, Client: e.Client, Discovery: e.Discovery, Plans: &e.backups}
}

// BackupStep is the backup gate (pkg/backupgate), the first step of a pass
// whose policy asks for a backup: nothing is deleted before a verified
// Backup holds what the uninstall destroys.
func (u *Uninstall) BackupStep() Step {
	return Step{Name: "the backup", Label: "backup", Run: u.e.gate().For(gateHost{u}).Run}
}

// WaitingOnBackup is the cheap pass of an uninstall whose record waits on a
// Backup Velero still runs: ok means it still runs and requeue is when to
// look again. Anything else is for a full pass.
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
	if rec.uid != owner.GetUID() || rec.st.Policy != settings.Policy || rec.st.Phase != cleanupv1alpha1.PhaseDeleting {
		return 0, false
	}
	requeue, ok, err := e.gate().Running(ctx, b.Velero, rec.st.Backup, kind.owner(owner))
	if err != nil {
		log.V(1).Info("Reading the Backup for its wait failed: a full pass follows", "error", err.Error())
	}
	return requeue, ok
}

// backed are the namespaces whose operands the uninstall's verified backup
// holds (decide.BackedNamespaces); nil without a backup.
func (u *Uninstall) backed() decide.NamespaceSet {
	st := u.rec.st.Backup
	if u.settings.Backup == nil || st == nil {
		return nil
	}
	return decide.BackedNamespaces(st.Verified, st.Namespaces)
}

// gateHost is the pass as the backup gate sees it.
type gateHost struct{ u *Uninstall }

func (h gateHost) Owner() decide.Owner                      { return h.u.kind.owner(h.u.subject) }
func (h gateHost) Settings() decide.Settings                { return h.u.settings }
func (h gateHost) Status() *cleanupv1alpha1.UninstallStatus { return h.u.rec.st }
func (h gateHost) UndoCommand() string                      { return h.u.e.undoCommand(h.u.kind, h.u.subject) }
func (h gateHost) Event(eventType, reason, action, note string, args ...any) {
	h.u.Event(eventType, reason, action, note, args...)
}

func (h gateHost) Plan(ctx context.Context, depth dryrun.PlanDepth) (*dryrun.DryRun, error) {
	return h.u.owner.Plan(ctx, h.u.now, depth)
}

func (h gateHost) Wait(note string, poll time.Duration) {
	h.u.waitNote, h.u.poll = cmp.Or(note, h.u.waitNote), poll
}

func (h gateHost) Deleting(ctx context.Context, msg string) error {
	h.u.rec.deleting(msg)
	return h.u.e.save(ctx, h.u.rec)
}

// undoCommand is how a person undoes the uninstall of owner, before its
// operator is installed again (UndoCommand, the CLI's).
func (e *Engine) undoCommand(kind RecordKind, owner client.Object) string {
	if e.UndoCommand == nil {
		return "csv-cleaner undo"
	}
	return e.UndoCommand(kind.owner(owner))
}

// undoNote is what a Completed record and Event say of the backup that
// gated the uninstall.
func (u *Uninstall) undoNote(st *cleanupv1alpha1.UninstallStatus) string {
	b := st.Backup
	if b == nil || !b.Verified || b.Name == "" || b.Planned == 0 {
		return ""
	}
	return fmt.Sprintf("; Velero's Backup %s/%s holds everything it destroyed: to undo, run %s (or kubectl csv-cleaner undo) before you install the operator again, then install it", b.Namespace, b.Name, u.e.undoCommand(u.kind, u.subject))
}

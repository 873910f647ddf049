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
	"github.com/csv-cleaner/csv-cleaner/pkg/instances"
)

// gather is the engine's Gatherer.
func (e *Engine) gather() instances.Gatherer {
	return instances.Gatherer{Live: e.APIReader, Cached: e.Client}
}

// gate is the backup gate with the engine's clients and its Backups' plans.
func (e *Engine) gate() backupgate.Gate {
	return backupgate.Gate{Live: e.APIReader, Client: e.Client, Discovery: e.Discovery, Plans: &e.backups}
}

// BackupStep is the backup gate (pkg/backupgate), the first step of a pass
// whose policy asks for a backup: nothing is deleted before a verified
// Backup holds what the uninstall destroys.
func (u *Uninstall) BackupStep() Step {
	return Step{Name: "the backup", Label: "backup", Run: u.backupGate}
}

// gateRuns bounds the gate's runs in one pass: one to ask for the plan of
// the kinds, one to make the Backup and ask for the plan of the instances,
// one to keep it; a verification asks for one plan at most.
const gateRuns = 3

// backupGate runs the gate over the pass as read so far, handing it the
// owner's plan, read here, when it asks for one (Outcome.NeedsPlan), and
// writes what it came to into the record: the Backup's status, what the
// pass waits for, and, once the Backup is verified, the record at Deleting
// before the first delete.
func (u *Uninstall) backupGate(ctx context.Context) (bool, error) {
	gate := u.e.gate()
	pass := backupgate.Pass{Owner: u.kind.owner(u.subject), Settings: u.settings, Backup: u.rec.st.Backup, Reason: u.rec.st.Reason, Message: u.rec.st.Message,
		UndoCommand: u.e.undoCommand(u.kind, u.subject), Event: u.Event}
	out, err := gate.Run(ctx, pass)
	for runs := 1; err == nil && out.NeedsPlan != nil; runs++ {
		if runs == gateRuns {
			return false, fmt.Errorf("the backup gate asked for a plan %d times in one pass", runs)
		}
		pass.Depth, pass.Backup = *out.NeedsPlan, out.Backup
		if pass.Plan, err = u.owner.Plan(ctx, u.now, pass.Depth); err != nil {
			u.rec.st.Backup = out.Backup
			return false, fmt.Errorf("planning what the backup must hold: %w", err)
		}
		out, err = gate.Run(ctx, pass)
	}
	u.rec.st.Backup = out.Backup
	if out.Poll > 0 {
		u.waitNote, u.poll = cmp.Or(out.WaitNote, u.waitNote), out.Poll
	}
	if err != nil || !out.Open {
		return false, err
	}
	if out.Deleting != "" {
		u.rec.deleting(out.Deleting)
		if err := u.e.save(ctx, u.rec); err != nil {
			return false, fmt.Errorf("recording the verified backup: %w", err)
		}
	}
	return true, nil
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

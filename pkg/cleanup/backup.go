package cleanup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// How often a pass looks at a Backup that is running: a fiftieth of its
// age so far (about 2 % added to the backup's time), within these bounds;
// a DownloadRequest every downloadPoll within the pass, up to downloadWait.
const (
	backupPollMin = 100 * time.Millisecond
	backupPollMax = time.Second
	backupPollDiv = 50
	downloadPoll  = 20 * time.Millisecond
	downloadWait  = 2 * time.Second
)

// backupTool is what the gate asks of the tool that makes the backups:
// pkg/velero's Client.
type backupTool interface {
	Backup(ctx context.Context, name string) (*velero.Backup, error)
	LocationProblem(ctx context.Context, name string) (*decide.Problem, error)
	CreateBackup(ctx context.Context, name string, owner velero.Owner, content decide.BackupContent, s *cleanupv1alpha1.VeleroBackup) error
	ResourceList(ctx context.Context, b *velero.Backup, now time.Time) (map[string][]string, bool, error)
	VolumeBackups(ctx context.Context, b *velero.Backup, now time.Time) ([]decide.VolumeBackup, bool, error)
	KeepDestroyed(ctx context.Context, b *velero.Backup, owner velero.Owner, d *velero.Destroyed) error
}

// veleroOf is the Velero of the policy's backup settings, read live.
func (e *Engine) veleroOf(v *cleanupv1alpha1.VeleroBackup) velero.Client {
	return velero.Client{Live: e.APIReader, Writer: e.Client, Namespace: v.Namespace}
}

// BackupStep is the backup gate, the first step of a pass whose policy asks
// for a backup: one Backup per attempt (decide.BackupName) of what the
// uninstall destroys, waited for and verified (decide.VerifyBackup,
// decide.VerifyVolumes) before anything is deleted, made again under the
// next attempt's name when it fails (decide.RetryBackup). docs/backup.md
// says what it holds and why the gate stays open once verified.
func (u *Uninstall) BackupStep() Step {
	return Step{Name: "the backup", Label: "backup", Run: u.gateOnBackup}
}

// gateOnBackup is one pass of the backup gate; done once the Backup is verified.
func (u *Uninstall) gateOnBackup(ctx context.Context) (bool, error) {
	b := u.settings.Backup
	if b == nil || u.rec.st.Backup != nil && u.rec.st.Backup.Verified {
		return true, nil
	}
	if b.Velero == nil {
		return false, velero.Unavailable("CleanupPolicy "+u.settings.Policy, "CleanupPolicy %s asks for a backup without naming a tool csv-cleaner knows (velero): nothing is deleted without a backup", u.settings.Policy)
	}
	return u.gate(ctx, u.e.veleroOf(b.Velero), b.Velero.Namespace)
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

// backupName is the name of the Backup of the uninstall's attempt.
func (u *Uninstall) backupName(attempt int32) string {
	return decide.BackupName(u.kind.Subject.Kind, u.subject.GetNamespace(), u.subject.GetName(), u.subject.GetUID(), attempt)
}

// veleroOwner is the owner as its Backups name it.
func (u *Uninstall) veleroOwner() velero.Owner {
	return velero.Owner{UID: u.subject.GetUID(), Title: u.owner.Title(),
		Hash: decide.OwnerHash(u.kind.Subject.Kind, u.subject.GetNamespace(), u.subject.GetName())}
}

// gate is the gate's pass on tool, whose objects are in namespace.
func (u *Uninstall) gate(ctx context.Context, tool backupTool, namespace string) (bool, error) {
	attempt := int32(1)
	if st := u.rec.st.Backup; st != nil && st.Attempt > 1 {
		attempt = st.Attempt
	}
	if st := u.rec.st.Backup; st != nil && st.RetryTime != nil {
		if wait := st.RetryTime.Sub(time.Now()); wait > 0 {
			// Blocked as the record says, until the next Backup is due.
			u.poll = wait
			return false, &decide.Problem{Reason: cmp.Or(u.rec.st.Reason, cleanupv1alpha1.BlockedBackupFailed), Object: "Backup " + st.Name, Message: u.rec.st.Message}
		}
		attempt++
		st.Attempt, st.RetryTime = attempt, nil
	}
	name := u.backupName(attempt)
	backup, err := tool.Backup(ctx, name)
	if err != nil {
		return false, err
	}
	if backup == nil {
		return u.makeBackup(ctx, tool, namespace, name, attempt)
	}
	st := u.noteBackup(namespace, name, attempt, backup.Phase, backup.Items)
	gate := decide.GateOnBackup(name, backup.Phase)
	now := time.Now()
	switch {
	case gate.Problem != nil:
		return false, u.backupFailed(st, backup, gate.Problem)
	case gate.Wait:
		// The message names the phase, not the items so far: it changes,
		// and the record is written, when the phase does, not at every
		// look. The list's URL is asked for only once the Backup is
		// Completed (pkg/velero's request says why).
		u.waitOnBackup(fmt.Sprintf("Waiting for Velero's Backup %s/%s (%s) before anything is deleted", namespace, name, phaseOrNew(backup.Phase)),
			now.Sub(backup.Created))
		return false, nil
	}
	held, ready, err := u.backupHolds(ctx, tool, backup, now)
	if err != nil {
		return false, err
	}
	if !ready {
		u.waitNote, u.poll = fmt.Sprintf("Waiting for the resource list of Velero's Backup %s/%s before anything is deleted", namespace, name), backupPollMin
		return false, nil
	}
	destroyed, unread, err := u.verifiedDestroyed(ctx, backup, held)
	var problem *decide.Problem
	if errors.As(err, &problem) && problem.Reason == cleanupv1alpha1.BlockedBackupIncomplete {
		return false, u.backupFailed(st, backup, problem)
	}
	if err != nil {
		return false, err
	}
	// What it destroys is kept beside the Backup before the record says
	// verified: the undo restores that and nothing else.
	if err := tool.KeepDestroyed(ctx, backup, u.veleroOwner(), destroyed); err != nil {
		return false, err
	}
	verified := metav1.Now()
	st.Verified, st.VerifiedTime = true, &verified
	st.Planned, st.Dependents, st.Volumes = int32(len(destroyed.Deleted)), int32(len(destroyed.Dependents)), int32(decide.Snapshots(destroyed.Volumes))
	st.Unread = unreadStatus(unread)
	for _, k := range unread {
		logr.FromContextOrDiscard(ctx).Info("Going on beside a kind the garbage collector cannot read all of, none of whose objects the uninstall destroys",
			"resource", k.Resource, "reason", k.Reason, "namespaces", k.Namespaces, "why", k.Message)
		u.Event(corev1.EventTypeWarning, "DependentsUnread", "Backup", "%s", k.Message)
	}
	logr.FromContextOrDiscard(ctx).Info("Velero's Backup holds everything the uninstall will destroy", "backup", klog.KRef(namespace, name),
		"planned", st.Planned, "dependents", st.Dependents, "volumes", st.Volumes, "items", backup.Items)
	u.Event(corev1.EventTypeNormal, "BackupVerified", "Backup", "Velero's Backup %s/%s holds all %d objects the uninstall will delete, the %d the garbage collector deletes with them and %d volumes' snapshots (%d items); undo with: %s",
		namespace, name, st.Planned, st.Dependents, st.Volumes, backup.Items, u.undoCommand())
	// The record says so before the first delete, which follows in this pass.
	u.rec.deleting(fmt.Sprintf("Velero's Backup %s/%s holds all %d objects the uninstall will delete and the %d it destroys with them: deleting them", namespace, name, st.Planned, st.Dependents))
	if err := u.e.save(ctx, u.rec); err != nil {
		return false, fmt.Errorf("recording the verified backup: %w", err)
	}
	return true, nil
}

// backupFailed blocks on a Backup that failed or came out incomplete
// (problem), with when the next attempt's Backup is made (decide.RetryBackup).
func (u *Uninstall) backupFailed(st *cleanupv1alpha1.BackupStatus, backup *velero.Backup, problem *decide.Problem) error {
	now := time.Now()
	attempt := max(st.Attempt, 1)
	at, p := decide.RetryBackup(decide.FailedBackup{Problem: problem, Attempt: attempt, Next: u.backupName(attempt + 1), Created: backup.Created, Seen: now})
	st.RetryTime = &metav1.Time{Time: at}
	u.poll = at.Sub(now)
	return p
}

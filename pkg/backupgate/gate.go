package backupgate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/destroyed"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// A pass looks at a Backup that is running as decide.VeleroPoll says (a
// fiftieth of its age so far: about 2 % added to the backup's time), and
// at a DownloadRequest every downloadPoll within the pass, up to
// downloadWait.
const (
	downloadPoll = 20 * time.Millisecond
	downloadWait = 2 * time.Second
)

// backupTool is what the gate asks of the tool that makes the backups:
// pkg/velero's Client.
type backupTool interface {
	Backup(ctx context.Context, name string) (*velero.Backup, error)
	LocationProblem(ctx context.Context, name string) (*decide.Problem, error)
	CreateBackup(ctx context.Context, name string, owner decide.Owner, content decide.BackupContent, s *cleanupv1alpha1.VeleroBackup) error
	ResourceList(ctx context.Context, b *velero.Backup, now time.Time) (map[string][]string, bool, error)
	VolumeBackups(ctx context.Context, b *velero.Backup, now time.Time) ([]decide.VolumeBackup, bool, error)
	KeepDestroyed(ctx context.Context, b *velero.Backup, owner decide.Owner, d *destroyed.Record) error
	OwnPolicy(ctx context.Context, b *velero.Backup) error
	Failure(ctx context.Context, b *velero.Backup, now time.Time) (decide.BackupFailure, bool, error)
	Workers(ctx context.Context) (int, bool, error)
}

// Gate is the backup gate of one pass of an uninstall: what it reads and
// writes with (the engine's clients, live), and, while it runs, the pass it
// gates and what that pass comes to.
type Gate struct {
	// Live reads from the API server; Client writes, and maps kinds to
	// their resources.
	Live   client.Reader
	Client client.Client
	// Discovery tells the kinds the API server serves, for the scan of the
	// uninstall's dependents.
	Discovery discovery.DiscoveryInterface
	// Plans keeps what each uninstall's Backup was made of, until it is
	// verified: the engine's, for every pass.
	Plans *Plans

	pass Pass
	out  Outcome
}

// Pass is the pass of an uninstall the gate opens, as the engine read it
// before the gate: the gate reads it and writes nothing into it.
type Pass struct {
	// Owner is what is uninstalled; Settings, the policy's settings the
	// uninstall runs under.
	Owner    decide.Owner
	Settings decide.Settings
	// Backup is the record's backup status as the pass began; Reason and
	// Message, the record's, said again while a failed Backup's next
	// attempt is not due.
	Backup          *cleanupv1alpha1.BackupStatus
	Reason, Message string
	// Plan is the owner's plan at Depth, read by the engine in this pass
	// because the gate asked for it (Outcome.NeedsPlan); nil until it did.
	// The gate asks only when it makes or verifies a Backup.
	Plan  *dryrun.DryRun
	Depth dryrun.PlanDepth
	// UndoCommand is how a person undoes the uninstall.
	UndoCommand string
	// Event sends an Event on the owner.
	Event func(eventType, reason, action, note string, args ...any)
}

// Outcome is what one pass of the gate came to, for the engine to write
// into the record: the gate holds no pointer into it.
type Outcome struct {
	// Open: the Backup is verified (or none is needed), and the pass goes on
	// to delete.
	Open bool
	// Backup is the record's backup status now.
	Backup *cleanupv1alpha1.BackupStatus
	// WaitNote says what the pass waits for ("" keeps what the record
	// says); Poll, when set, is how soon to look again.
	WaitNote string
	Poll     time.Duration
	// Deleting, set when the Backup was verified in this pass, is the
	// record's message before the first delete: written before the pass
	// deletes anything.
	Deleting string
	// NeedsPlan, when set, asks the engine for the owner's plan at that
	// depth, read now, and to run the gate again with it (Pass.Plan) and
	// the Backup status above, in the same pass.
	NeedsPlan *dryrun.PlanDepth
}

// wait says what the pass waits for ("" keeps what it says) and looks
// again after poll.
func (g *Gate) wait(note string, poll time.Duration) {
	g.out.WaitNote, g.out.Poll = cmp.Or(note, g.out.WaitNote), poll
}

// veleroOf is the Velero of the policy's backup settings, read live.
func (g *Gate) veleroOf(v *cleanupv1alpha1.VeleroBackup) velero.Client {
	return velero.Client{Live: g.Live, Writer: g.Client, Namespace: v.Namespace}
}

// The backup gate is the first step of a pass whose policy asks
// for a backup: one Backup per attempt (decide.BackupName) of what the
// uninstall destroys, waited for and verified (decide.VerifyBackup,
// decide.VerifyVolumes) before anything is deleted, made again under the
// next attempt's name when it fails (decide.RetryBackup). docs/backup.md
// says what it holds and why the gate stays open once verified.
//
// Run is one pass of the backup gate over p: its Outcome is Open once
// the Backup is verified. The Outcome carries the record's backup status
// on an error too (a failed Backup's next attempt, the last failure).
func (g Gate) Run(ctx context.Context, p Pass) (Outcome, error) {
	g.pass, g.out = p, Outcome{Backup: p.Backup.DeepCopy()}
	open, err := g.run(ctx)
	g.out.Open = open && err == nil
	return g.out, err
}

// run is Run's pass; done once the Backup is verified.
func (g *Gate) run(ctx context.Context) (bool, error) {
	b := g.pass.Settings.Backup
	if b == nil || g.out.Backup != nil && g.out.Backup.Verified {
		return true, nil
	}
	if b.Velero == nil {
		return false, velero.Unavailable("CleanupPolicy "+g.pass.Settings.Policy, "CleanupPolicy %s asks for a backup without naming a tool csv-cleaner knows (velero): nothing is deleted without a backup", g.pass.Settings.Policy)
	}
	return g.gate(ctx, g.veleroOf(b.Velero), b.Velero.Namespace)
}

// backupName is the name of the Backup of the uninstall's attempt.
func (g *Gate) backupName(attempt int32) string {
	return g.pass.Owner.BackupName(attempt)
}

// gate is the gate's pass on tool, whose objects are in namespace.
func (g *Gate) gate(ctx context.Context, tool backupTool, namespace string) (bool, error) {
	attempt := int32(1)
	if st := g.out.Backup; st != nil && st.Attempt > 1 {
		attempt = st.Attempt
	}
	if st := g.out.Backup; st != nil && st.RetryTime != nil {
		if wait := time.Until(st.RetryTime.Time); wait > 0 {
			// Blocked as the record says, until the next Backup is due.
			g.wait("", wait)
			return false, &decide.Problem{Reason: cmp.Or(g.pass.Reason, cleanupv1alpha1.BlockedBackupFailed), Object: "Backup " + st.Name, Message: g.pass.Message}
		}
		attempt++
		st.Attempt, st.RetryTime = attempt, nil
	}
	name := g.backupName(attempt)
	backup, err := tool.Backup(ctx, name)
	if err != nil {
		return false, err
	}
	if backup == nil {
		return g.makeBackup(ctx, tool, namespace, name, attempt)
	}
	st := g.noteBackup(namespace, name, attempt, backup.Phase, backup.Items)
	gate := decide.GateOnBackup(name, backup.Phase)
	now := time.Now()
	switch {
	case gate.Problem != nil:
		return false, g.backupFailed(st, backup, g.whyFailed(ctx, tool, backup, gate.Problem))
	case gate.Wait:
		// The message names the phase, not the items so far: it changes,
		// and the record is written, when the phase does, not at every
		// look. The list's URL is asked for only once the Backup is
		// Completed (pkg/velero's request says why).
		g.waitOnBackup(decide.WaitingOnBackup(decide.BackupWait{Namespace: namespace, Name: name, Phase: backup.Phase, Attempt: attempt,
			Expected: st.Expected, LastFailure: st.LastFailure}), now.Sub(backup.Created))
		return g.keepPlan(ctx, namespace, name, attempt, st.Namespaces)
	}
	read, err := g.readCompleted(ctx, tool, backup, now)
	if err != nil || read.plan == nil {
		return false, err
	}
	if !read.ready {
		g.wait(fmt.Sprintf("Waiting for the resource list of Velero's Backup %s/%s before anything is deleted", namespace, name), decide.VeleroPollMin)
		return false, nil
	}
	record, unread, err := g.verifiedDestroyed(backup, read)
	if errors.Is(err, errReplan) {
		return g.needPlan(dryrun.PlanAll)
	}
	var problem *decide.Problem
	if errors.As(err, &problem) && problem.Reason == cleanupv1alpha1.BlockedBackupIncomplete {
		return false, g.backupFailed(st, backup, problem)
	}
	if err != nil {
		return false, err
	}
	// What it destroys is kept beside the Backup before the record says
	// verified: the undo restores that and nothing else. Both, and the
	// Backup's resource policy, go with the Backup.
	if err := tool.OwnPolicy(ctx, backup); err != nil {
		return false, err
	}
	if err := tool.KeepDestroyed(ctx, backup, g.pass.Owner, record); err != nil {
		return false, err
	}
	verified := metav1.Now()
	st.Verified, st.VerifiedTime = true, &verified
	st.Planned, st.Dependents, st.Volumes = int32(len(record.Deleted)), int32(len(record.Dependents)), int32(decide.Snapshots(record.Volumes))
	st.Unread = unreadStatus(unread)
	for _, k := range unread {
		logr.FromContextOrDiscard(ctx).Info("Going on beside a kind the garbage collector cannot read all of, none of whose objects the uninstall destroys",
			"resource", k.Resource, "reason", k.Reason, "namespaces", k.Namespaces, "why", k.Message)
		g.pass.Event(corev1.EventTypeWarning, "DependentsUnread", "Backup", "%s", k.Message)
	}
	logr.FromContextOrDiscard(ctx).Info("Velero's Backup holds everything the uninstall will destroy", "backup", klog.KRef(namespace, name),
		"planned", st.Planned, "dependents", st.Dependents, "volumes", st.Volumes, "items", backup.Items)
	g.pass.Event(corev1.EventTypeNormal, "BackupVerified", "Backup", "Velero's Backup %s/%s holds all %d objects the uninstall will delete, the %d the garbage collector deletes with them and %d volumes' snapshots (%d items); undo with: %s",
		namespace, name, st.Planned, st.Dependents, st.Volumes, backup.Items, g.pass.UndoCommand)
	// The record says so before the first delete, which follows in this pass.
	g.out.Deleting = fmt.Sprintf("Velero's Backup %s/%s holds all %d objects the uninstall will delete and the %d it destroys with them: deleting them", namespace, name, st.Planned, st.Dependents)
	return true, nil
}

// backupFailed blocks on a Backup that failed or came out incomplete
// (problem), with when the next attempt's Backup is made (decide.RetryBackup).
func (g *Gate) backupFailed(st *cleanupv1alpha1.BackupStatus, backup *velero.Backup, problem *decide.Problem) error {
	now := time.Now()
	attempt := max(st.Attempt, 1)
	at, p := decide.RetryBackup(decide.FailedBackup{Problem: problem, Attempt: attempt, Next: g.backupName(attempt + 1), Created: backup.Created, Seen: now})
	st.LastFailure = problem.Message
	st.RetryTime = &metav1.Time{Time: at}
	g.wait("", at.Sub(now))
	return p
}

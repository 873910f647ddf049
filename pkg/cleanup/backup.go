package cleanup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// How often a pass looks at a Backup that is running: a fiftieth of its
// age so far, so that the wait adds about 2 % to what the backup takes,
// within these bounds (some 70 reads of a Backup that takes 7 s, one every
// 5 s after the first 4 minutes); a DownloadRequest, which Velero answers
// at once, every downloadPoll within the pass, for up to downloadWait.
const (
	backupPollMin = 100 * time.Millisecond
	backupPollMax = 5 * time.Second
	backupPollDiv = 50
	downloadPoll  = 20 * time.Millisecond
	downloadWait  = 2 * time.Second
)

// backupTool is what the gate asks of the tool that makes the backups:
// pkg/velero's Client.
type backupTool interface {
	Backup(ctx context.Context, name string) (*velero.Backup, error)
	LocationProblem(ctx context.Context, name string) (*plan.Problem, error)
	CreateBackup(ctx context.Context, name string, owner velero.Owner, content plan.BackupContent, s *cleanupv1alpha1.VeleroBackup) error
	ResourceList(ctx context.Context, b *velero.Backup, now time.Time) (map[string][]string, bool, error)
	VolumeBackups(ctx context.Context, b *velero.Backup, now time.Time) ([]plan.VolumeBackup, bool, error)
	KeepDestroyed(ctx context.Context, b *velero.Backup, owner velero.Owner, d *velero.Destroyed) error
}

// veleroOf is the Velero of the policy's backup settings, read live.
func (e *Engine) veleroOf(v *cleanupv1alpha1.VeleroBackup) velero.Client {
	return velero.Client{Live: e.APIReader, Writer: e.Client, Namespace: v.Namespace}
}

// BackupStep is the backup gate, the first step of every owner's pass
// when its policy asks for a backup (issues 34 and 42): nothing is
// deleted before a Backup holds every object the uninstall destroys, the
// objects it deletes and the dependents the garbage collector deletes
// with them, and a snapshot of their volumes' data. It makes one Backup
// per attempt (plan.BackupName: a restart finds it, never makes a
// second), waits for it to end (plan.GateOnBackup), then checks its
// resource list and volumes against what the uninstall destroys
// (plan.VerifyBackup, plan.VerifyVolumes); one that failed or came out
// incomplete is made again under the next attempt's name
// (plan.RetryBackup). Once verified (written before anything is deleted,
// with what it destroys kept beside the Backup for the undo), the gate
// stays open for the rest of the uninstall: every operand a later pass
// deletes existed when the deletion began (the after-deletion rule keeps
// the newer ones), in a namespace the Backup holds (NotInBackup keeps the
// others).
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
// holds (plan.BackedNamespaces); nil without a backup.
func (u *Uninstall) backed() plan.NamespaceSet {
	st := u.rec.st.Backup
	if u.settings.Backup == nil || st == nil {
		return nil
	}
	return plan.BackedNamespaces(st.Verified, st.Namespaces)
}

// backupName is the name of the Backup of the uninstall's attempt.
func (u *Uninstall) backupName(attempt int32) string {
	return plan.BackupName(u.kind.Subject.Kind, u.subject.GetNamespace(), u.subject.GetName(), u.subject.GetUID(), attempt)
}

// veleroOwner is the owner as its Backups name it.
func (u *Uninstall) veleroOwner() velero.Owner {
	return velero.Owner{UID: u.subject.GetUID(), Title: u.owner.Title(),
		Hash: plan.OwnerHash(u.kind.Subject.Kind, u.subject.GetNamespace(), u.subject.GetName())}
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
			return false, &plan.Problem{Reason: cmp.Or(u.rec.st.Reason, cleanupv1alpha1.BlockedBackupFailed), Object: "Backup " + st.Name, Message: u.rec.st.Message}
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
	gate := plan.GateOnBackup(name, backup.Phase)
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
	destroyed, err := u.verifiedDestroyed(ctx, backup, held)
	var problem *plan.Problem
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
	st.Planned, st.Dependents, st.Volumes = int32(len(destroyed.Deleted)), int32(len(destroyed.Dependents)), int32(snapshots(destroyed.Volumes))
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
// (problem), with when the next attempt's Backup is made (plan.RetryBackup).
func (u *Uninstall) backupFailed(st *cleanupv1alpha1.BackupStatus, backup *velero.Backup, problem *plan.Problem) error {
	now := time.Now()
	attempt := max(st.Attempt, 1)
	at, p := plan.RetryBackup(plan.FailedBackup{Problem: problem, Attempt: attempt, Next: u.backupName(attempt + 1), Created: backup.Created, Seen: now})
	st.RetryTime = &metav1.Time{Time: at}
	u.poll = at.Sub(now)
	return p
}

// snapshots counts the volumes whose data a backup holds.
func snapshots(volumes []plan.Volume) int {
	n := 0
	for _, v := range volumes {
		if v.Snapshot {
			n++
		}
	}
	return n
}

// backupHeld is what a completed Backup holds, as Velero lists it.
type backupHeld struct {
	list    map[string][]string
	volumes []plan.VolumeBackup
}

// backupHolds reads what a completed Backup holds: its resource list and
// its volumes. Velero answers the requests for them in tens of
// milliseconds: the pass waits for the answers (looking every
// downloadPoll, up to downloadWait) rather than end and read everything
// again in the next; ready is false if they have not come.
func (u *Uninstall) backupHolds(ctx context.Context, tool backupTool, backup *velero.Backup, now time.Time) (backupHeld, bool, error) {
	var h backupHeld
	var listed, volumes bool
	err := wait.PollUntilContextTimeout(ctx, downloadPoll, downloadWait, true, func(ctx context.Context) (bool, error) {
		var err error
		if !listed {
			if h.list, listed, err = tool.ResourceList(ctx, backup, now); err != nil {
				return false, err
			}
		}
		if !volumes {
			if h.volumes, volumes, err = tool.VolumeBackups(ctx, backup, now); err != nil {
				return false, err
			}
		}
		return listed && volumes, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return h, false, nil
	}
	return h, err == nil, err
}

// makeBackup makes the uninstall's Backup (named name, at attempt), once
// Velero's storage location is Available: of every instance of the kinds
// whose instances it deletes in its targets and of its other deletions (a
// PlanKinds plan), and of the dependents the garbage collector deletes
// with them (scanDependents), after checking that Velero can snapshot
// their volumes. Then it plans the instances while Velero backs them up:
// the verification checks the Backup against that plan, and the listing is
// off the gate's path. An uninstall that destroys nothing needs no Backup:
// the gate is open (done).
func (u *Uninstall) makeBackup(ctx context.Context, tool backupTool, namespace, name string, attempt int32) (done bool, _ error) {
	began := time.Now()
	kinds, err := u.planned(ctx, PlanKinds)
	if err != nil {
		return false, err
	}
	others, err := plan.DeletionsOf(kinds.Items, pluralOf(u.e.Client.RESTMapper()))
	if err != nil {
		return false, fmt.Errorf("naming what the backup must hold: %w", err)
	}
	dependents, volumes, err := u.e.scanDependents(ctx, u.settings.Backup.Velero, kinds.kinds, plan.DeletedByKind(kindSet(kinds.kinds), kinds.targets, others))
	if err != nil {
		return false, err
	}
	content := plan.BackupScopeOfKinds(kinds.kinds, kinds.targets, others, heldWithVolumes(dependents, volumes))
	if content.Empty() {
		u.openWithoutBackup(namespace, "", attempt, nil)
		return true, nil
	}
	if content.NeedsNamespaces() {
		if content.Existing, err = namespacesThere(ctx, u.e.APIReader); err != nil {
			return false, err
		}
	}
	problem, err := tool.LocationProblem(ctx, u.settings.Backup.Velero.StorageLocation)
	if err != nil {
		return false, err
	}
	if problem != nil {
		return false, problem
	}
	log := logr.FromContextOrDiscard(ctx)
	log.Info("Creating Velero's Backup of what the uninstall will destroy", "backup", klog.KRef(namespace, name), "attempt", attempt,
		"planTook", time.Since(began).Round(time.Millisecond).String(), "namespaces", content.Namespaces, "resources", content.Resources(),
		"named", len(content.Named), "volumes", snapshots(volumes))
	if err := tool.CreateBackup(ctx, name, u.veleroOwner(), content, u.settings.Backup.Velero); err != nil {
		return false, err
	}
	st := u.noteBackup(namespace, name, attempt, "", 0)
	st.Namespaces = content.WholeIn
	u.Event(corev1.EventTypeNormal, "BackupCreated", "Backup", "Created Velero's Backup %s/%s of %s; nothing is deleted before it is complete and holds every object the uninstall destroys",
		namespace, name, describeContent(content))
	u.waitOnBackup(fmt.Sprintf("Waiting for Velero's Backup %s/%s (New) before anything is deleted", namespace, name), 0)

	listed := time.Now()
	deletions, err := u.plannedDeletions(ctx)
	if err != nil {
		return false, err
	}
	log.Info("Planned the uninstall while Velero backs it up", "backup", klog.KRef(namespace, name), "planned", len(deletions),
		"planTook", time.Since(listed).Round(time.Millisecond).String())
	if len(deletions) == 0 {
		u.openWithoutBackup(namespace, name, attempt, content.WholeIn)
		return true, nil
	}
	u.e.backups.keep(u.subject.GetUID(), deletions)
	return false, nil
}

// namespacesThere are the names of the namespaces there are.
func namespacesThere(ctx context.Context, r client.Reader) ([]string, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
	if err := r.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing the namespaces: %w", err)
	}
	out := make([]string, 0, len(list.Items))
	for _, ns := range list.Items {
		out = append(out, ns.Name)
	}
	return out, nil
}

// kindSet are the kinds (Kind.group) of scopes.
func kindSet(scopes []plan.CRDScope) map[string]bool {
	out := make(map[string]bool, len(scopes))
	for _, s := range scopes {
		out[s.Kind] = true
	}
	return out
}

// heldWithVolumes are the dependents a backup must hold, and the
// PersistentVolumes of the claims whose data it snapshots (Velero takes a
// claim's volume with it).
func heldWithVolumes(dependents []plan.Node, volumes []plan.Volume) []plan.Held {
	out := dependents2Held(dependents)
	for _, v := range volumes {
		if v.Snapshot {
			out = append(out, plan.Held{Kind: "PersistentVolume", Resource: "persistentvolumes", Name: v.VolumeName})
		}
	}
	return out
}

// openWithoutBackup opens the gate of an uninstall that destroys nothing,
// whose Backup (name, when one was made) holds nothing it needs, nor
// anything of the namespaces it looked in (an operand there later is kept
// all the same).
func (u *Uninstall) openWithoutBackup(namespace, name string, attempt int32, namespaces []string) {
	now := metav1.Now()
	u.rec.st.Backup = &cleanupv1alpha1.BackupStatus{Tool: cleanupv1alpha1.BackupToolVelero, Namespace: namespace, Name: name, Attempt: attempt,
		Verified: true, VerifiedTime: &now, Namespaces: namespaces}
}

// describeContent says, for a person, what a Backup includes.
func describeContent(c plan.BackupContent) string {
	where := fmt.Sprintf("%d namespaces", len(c.Namespaces))
	switch {
	case slices.Contains(c.Namespaces, plan.EveryNamespace):
		where = "every namespace"
	case len(c.Namespaces) == 1:
		where = "namespace " + c.Namespaces[0]
	case len(c.Namespaces) == 0:
		where = "the cluster"
	}
	return fmt.Sprintf("%s in %s (%d objects by name)", strings.Join(c.Resources(), ", "), where, len(c.Named))
}

// verifiedDestroyed checks what a completed Backup holds against what the
// uninstall destroys: what the plan deleted when this process made the
// Backup, or else, and when that finds an object missing (it may have been
// deleted meanwhile), what the plan deletes now (what was created
// meanwhile the uninstall keeps); the dependents of those deletions, read
// again now; and the snapshots of their volumes. It returns what the
// uninstall destroys, or the problem that blocks.
func (u *Uninstall) verifiedDestroyed(ctx context.Context, backup *velero.Backup, held backupHeld) (*velero.Destroyed, error) {
	deletions := u.e.backups.take(u.subject.GetUID())
	for replanned := deletions == nil; ; replanned = true {
		if deletions == nil {
			var err error
			if deletions, err = u.plannedDeletions(ctx); err != nil {
				return nil, err
			}
		}
		dependents, volumes, err := u.e.scanDependents(ctx, u.settings.Backup.Velero, nil, plan.DeletedByName(deletions))
		if err != nil {
			return nil, err
		}
		destroyed := slices.Concat(deletions, dependents2Held(dependents))
		if _, problem := plan.VerifyBackup(backup.Name, held.list, destroyed); problem != nil {
			if !replanned {
				deletions = nil
				continue
			}
			return nil, problem
		}
		if problem := plan.VerifyVolumes(backup.Name, held.volumes, volumes); problem != nil {
			return nil, problem
		}
		return &velero.Destroyed{Owner: u.title, OwnerKind: u.kind.Subject.Kind, OwnerNamespace: u.subject.GetNamespace(), OwnerName: u.subject.GetName(),
			Backup: backup.Name, Verified: metav1.Now(), Deleted: deletions, Dependents: dependents2Held(dependents), Volumes: volumes}, nil
	}
}

// plannedDeletions are the objects the owner's uninstall deletes, as its
// plan says now.
func (u *Uninstall) plannedDeletions(ctx context.Context) ([]plan.Held, error) {
	d, err := u.planned(ctx, PlanAll)
	if err != nil {
		return nil, err
	}
	return plan.DeletionsOf(d.Items, pluralOf(u.e.Client.RESTMapper()))
}

// planned is the owner's plan to depth, as it is now. A plan that cannot
// tell everything the uninstall deletes blocks the gate.
func (u *Uninstall) planned(ctx context.Context, depth PlanDepth) (*DryRun, error) {
	d, err := u.owner.Plan(ctx, u.now, depth)
	if err != nil {
		return nil, fmt.Errorf("planning what the backup must hold: %w", err)
	}
	switch d.Verdict {
	case VerdictUninstall:
	case VerdictBlocked:
		return nil, &plan.Problem{Reason: d.Reason, Object: u.title, Message: d.Message + "; nothing is backed up or deleted before that is fixed"}
	case VerdictIncomplete:
		reason := cleanupv1alpha1.BlockedBackupIncomplete
		var kinds []string
		for _, unread := range d.Unread {
			kinds = append(kinds, unread.Kind+" ("+unread.Reason+")")
			if unread.Reason == ReadFailed {
				return nil, fmt.Errorf("planning what the backup must hold: %s", unread.Message)
			}
			if unread.Reason == cleanupv1alpha1.BlockedForbidden {
				reason = cleanupv1alpha1.BlockedForbidden
			}
		}
		return nil, &plan.Problem{Reason: reason, Object: u.title,
			Message: fmt.Sprintf("the uninstall cannot list everything it would delete (%s), so no backup can be shown to hold it: nothing is deleted before one does", strings.Join(kinds, ", "))}
	default:
		return nil, fmt.Errorf("planning what the backup must hold: the plan says %s (%s)", d.Verdict, d.Message)
	}
	return d, nil
}

// pluralOf names a kind's resource, as the API server serves it (mapper's).
func pluralOf(mapper meta.RESTMapper) func(group, kind string) (string, error) {
	return func(group, kind string) (string, error) {
		m, err := mapper.RESTMapping(schema.GroupKind{Group: group, Kind: kind})
		if err != nil {
			return "", err
		}
		return m.Resource.Resource, nil
	}
}

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
		return plan.BackupPhaseNew
	}
	return phase
}

// undoCommand is how a person undoes the uninstall, once its operator is reinstalled.
func (u *Uninstall) undoCommand() string {
	return UndoCommand(u.kind, u.subject.GetNamespace(), u.subject.GetName())
}

// UndoCommand is the command that undoes the uninstall of an owner of kind.
func UndoCommand(kind RecordKind, namespace, name string) string {
	if kind == CSVs {
		return fmt.Sprintf("csv-cleaner undo --namespace %s %s", namespace, name)
	}
	return "csv-cleaner undo clusterextension " + name
}

// undoNote is what a Completed record and Event say of the backup that
// gated the uninstall.
func undoNote(kind RecordKind, namespace, name string, st *cleanupv1alpha1.UninstallStatus) string {
	b := st.Backup
	if b == nil || !b.Verified || b.Name == "" || b.Planned == 0 {
		return ""
	}
	return fmt.Sprintf("; Velero's Backup %s/%s holds everything it destroyed: to undo, reinstall the operator, then %s (or kubectl csv-cleaner undo)", b.Namespace, b.Name, UndoCommand(kind, namespace, name))
}

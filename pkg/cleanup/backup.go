package cleanup

import (
	"context"
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
}

// veleroOf is the Velero of the policy's backup settings, read live.
func (e *Engine) veleroOf(v *cleanupv1alpha1.VeleroBackup) velero.Client {
	return velero.Client{Live: e.APIReader, Writer: e.Client, Namespace: v.Namespace}
}

// BackupStep is the backup gate, the first step of every owner's pass
// when its policy asks for a backup (issue 34): nothing is deleted before
// a Backup holds every object the uninstall will delete. It makes one
// Backup per uninstall (plan.BackupName: a restart finds it, never makes a
// second), of what the owner's plan deletes (plan.BackupScope), waits for
// it to end (plan.GateOnBackup), then checks its resource list against
// what the plan deletes (plan.VerifyBackup). The record keeps the Backup
// and, once verified (written before anything is deleted), the gate stays
// open for the rest of the uninstall: every operand a later pass deletes
// existed when the deletion began (the after-deletion rule keeps the newer
// ones), so before the Backup was made.
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

// gate is the gate's pass on tool, whose objects are in namespace.
func (u *Uninstall) gate(ctx context.Context, tool backupTool, namespace string) (bool, error) {
	name := plan.BackupName(u.kind.Subject.Kind, u.subject.GetNamespace(), u.subject.GetName(), u.subject.GetUID())
	backup, err := tool.Backup(ctx, name)
	if err != nil {
		return false, err
	}
	if backup == nil {
		return u.makeBackup(ctx, tool, namespace, name)
	}
	st := u.noteBackup(namespace, name, backup.Phase, backup.Items)
	gate := plan.GateOnBackup(name, backup.Phase)
	now := time.Now()
	switch {
	case gate.Problem != nil:
		return false, gate.Problem
	case gate.Wait:
		// The message names the phase, not the items so far: it changes,
		// and the record is written, when the phase does, not at every
		// look. The list's URL is asked for only once the Backup is
		// Completed (pkg/velero's requestList says why).
		u.waitOnBackup(fmt.Sprintf("Waiting for Velero's Backup %s/%s (%s) before anything is deleted", namespace, name, phaseOrNew(backup.Phase)),
			now.Sub(backup.Created))
		return false, nil
	}
	list, ready, err := u.resourceList(ctx, tool, backup, now)
	if err != nil {
		return false, err
	}
	if !ready {
		u.waitNote, u.poll = fmt.Sprintf("Waiting for the resource list of Velero's Backup %s/%s before anything is deleted", namespace, name), backupPollMin
		return false, nil
	}
	deletions, err := u.verifiedDeletions(ctx, name, list)
	if err != nil {
		return false, err
	}
	verified := metav1.Now()
	st.Verified, st.Planned, st.VerifiedTime = true, int32(len(deletions)), &verified
	logr.FromContextOrDiscard(ctx).Info("Velero's Backup holds everything the uninstall will delete", "backup", klog.KRef(namespace, name), "planned", len(deletions), "items", backup.Items)
	u.Event(corev1.EventTypeNormal, "BackupVerified", "Backup", "Velero's Backup %s/%s holds all %d objects the uninstall will delete (%d items); undo with: %s", namespace, name, len(deletions), backup.Items, restoreCommand(st))
	// The record says so before the first delete, which follows in this pass.
	u.rec.deleting(fmt.Sprintf("Velero's Backup %s/%s holds all %d objects the uninstall will delete: deleting them", namespace, name, len(deletions)))
	if err := u.e.save(ctx, u.rec); err != nil {
		return false, fmt.Errorf("recording the verified backup: %w", err)
	}
	return true, nil
}

// resourceList is the completed Backup's resource list. Velero answers the
// request for it in tens of milliseconds: the pass waits for the answer
// (looking every downloadPoll, up to downloadWait) rather than end and
// read everything again in the next; ready is false if it has not come.
func (u *Uninstall) resourceList(ctx context.Context, tool backupTool, backup *velero.Backup, now time.Time) (map[string][]string, bool, error) {
	var list map[string][]string
	err := wait.PollUntilContextTimeout(ctx, downloadPoll, downloadWait, true, func(ctx context.Context) (bool, error) {
		l, ready, err := tool.ResourceList(ctx, backup, now)
		list = l
		return ready, err
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return nil, false, nil
	}
	return list, err == nil, err
}

// makeBackup makes the uninstall's Backup, once Velero's storage location
// is Available, of every instance of the kinds whose instances it deletes
// in its targets and of its other deletions (a PlanKinds plan), then plans
// the instances while Velero backs them up: the verification checks the
// Backup against that plan, and the listing is off the gate's path. An
// uninstall that deletes nothing needs no Backup: the gate is open (done).
func (u *Uninstall) makeBackup(ctx context.Context, tool backupTool, namespace, name string) (done bool, _ error) {
	began := time.Now()
	kinds, err := u.planned(ctx, PlanKinds)
	if err != nil {
		return false, err
	}
	content, err := kinds.backupContent(pluralOf(u.e.Client.RESTMapper()))
	if err != nil {
		return false, fmt.Errorf("naming what the backup must hold: %w", err)
	}
	if content.Empty() {
		u.openWithoutBackup(namespace, "")
		return true, nil
	}
	problem, err := tool.LocationProblem(ctx, u.settings.Backup.Velero.StorageLocation)
	if err != nil {
		return false, err
	}
	if problem != nil {
		return false, problem
	}
	log := logr.FromContextOrDiscard(ctx)
	log.Info("Creating Velero's Backup of what the uninstall will delete", "backup", klog.KRef(namespace, name),
		"planTook", time.Since(began).Round(time.Millisecond).String(), "namespaces", content.Namespaces, "resources", content.Resources)
	if err := tool.CreateBackup(ctx, name, velero.Owner{UID: u.subject.GetUID(), Title: u.owner.Title()}, content, u.settings.Backup.Velero); err != nil {
		return false, err
	}
	u.noteBackup(namespace, name, "", 0)
	u.Event(corev1.EventTypeNormal, "BackupCreated", "Backup", "Created Velero's Backup %s/%s of %s; nothing is deleted before it is complete and holds every object the uninstall deletes",
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
		u.openWithoutBackup(namespace, name)
		return true, nil
	}
	u.e.backups.keep(u.subject.GetUID(), deletions)
	return false, nil
}

// openWithoutBackup opens the gate of an uninstall that deletes nothing,
// whose Backup (name, when one was made) holds nothing it needs.
func (u *Uninstall) openWithoutBackup(namespace, name string) {
	now := metav1.Now()
	u.rec.st.Backup = &cleanupv1alpha1.BackupStatus{Tool: cleanupv1alpha1.BackupToolVelero, Namespace: namespace, Name: name, Verified: true, VerifiedTime: &now}
}

// describeContent says, for a person, what a Backup includes.
func describeContent(c plan.BackupContent) string {
	where := fmt.Sprintf("%d namespaces", len(c.Namespaces))
	switch {
	case slices.Equal(c.Namespaces, []string{plan.EveryNamespace}):
		where = "every namespace"
	case len(c.Namespaces) == 1:
		where = "namespace " + c.Namespaces[0]
	case len(c.Namespaces) == 0:
		where = "the cluster"
	}
	return fmt.Sprintf("%s in %s", strings.Join(c.Resources, ", "), where)
}

// verifiedDeletions checks the Backup's resource list against what the
// uninstall deletes: what the plan deleted when this process made the
// Backup, or else, and when that finds an object missing (it may have
// been deleted meanwhile), what the plan deletes now (what was created
// meanwhile the uninstall keeps). It returns the deletions the list holds,
// or the problem that blocks.
func (u *Uninstall) verifiedDeletions(ctx context.Context, name string, list map[string][]string) ([]plan.Deletion, error) {
	if kept := u.e.backups.take(u.subject.GetUID()); kept != nil {
		if _, problem := plan.VerifyBackup(name, list, kept); problem == nil {
			return kept, nil
		}
	}
	deletions, err := u.plannedDeletions(ctx)
	if err != nil {
		return nil, err
	}
	if _, problem := plan.VerifyBackup(name, list, deletions); problem != nil {
		return nil, problem
	}
	return deletions, nil
}

// plannedDeletions are the objects the owner's uninstall deletes, as its
// plan says now.
func (u *Uninstall) plannedDeletions(ctx context.Context) ([]plan.Deletion, error) {
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

// backupContent is what the Backup of the plan's uninstall includes: its
// kinds in its targets, and its other deletions (at PlanAll its instances
// too, which add nothing the kinds in the targets do not hold).
func (d *DryRun) backupContent(plural func(group, kind string) (string, error)) (plan.BackupContent, error) {
	others, err := plan.DeletionsOf(d.Items, plural)
	if err != nil {
		return plan.BackupContent{}, err
	}
	return plan.BackupScopeOfKinds(d.kinds, d.targets, others), nil
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

// noteBackup keeps in the record the Backup as csv-cleaner last read it.
// Its items are written when its phase changes, not at every look: a
// record written at every poll of a running backup would cost more than
// it tells.
func (u *Uninstall) noteBackup(namespace, name, phase string, items int64) *cleanupv1alpha1.BackupStatus {
	st := u.rec.st.Backup
	if st == nil || st.Name != name || st.Namespace != namespace {
		st = &cleanupv1alpha1.BackupStatus{Tool: cleanupv1alpha1.BackupToolVelero, Namespace: namespace, Name: name}
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

// restoreCommand is how a person undoes the uninstall, once its operator is reinstalled.
func restoreCommand(st *cleanupv1alpha1.BackupStatus) string {
	return fmt.Sprintf("velero restore create --from-backup %s --namespace %s", st.Name, st.Namespace)
}

// undoNote is what a Completed record and Event say of the backup that
// gated the uninstall.
func undoNote(st *cleanupv1alpha1.UninstallStatus) string {
	b := st.Backup
	if b == nil || !b.Verified || b.Name == "" || b.Planned == 0 {
		return ""
	}
	return fmt.Sprintf("; Velero's Backup %s/%s holds everything it deleted: to undo, reinstall the operator, then %s", b.Namespace, b.Name, restoreCommand(b))
}

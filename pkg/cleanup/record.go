package cleanup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/transient"
)

// record is the record of one uninstall (a CSVCleanup, or an
// ExtensionCleanup) while a reconcile works on it. Its status is changed in
// memory and written once, only when it changed. obj is nil when the record
// cannot be written (the namespace is terminating): the uninstall then
// reports through logs and metrics only.
type record struct {
	obj  recordObject
	base recordObject
	// uid is the UID of the CSV or the ClusterExtension the record is for.
	uid types.UID
	// st is the status being built, obj's; for an unwritable record it
	// lives only for this reconcile.
	st *cleanupv1alpha1.UninstallStatus
	// prev is the status as it was before this reconcile, to detect transitions.
	prev cleanupv1alpha1.UninstallStatus
	// kept collects, during a pass of the uninstall's steps, the objects
	// they keep, bounded (boundKept); keptOn is set when the steps run, and
	// the status's list is then replaced by it.
	kept   []cleanupv1alpha1.ObjectRef
	keptOn bool
}

// openRecord reads the owner's record live, creating it when it is missing
// (create first with createFirst) and starting it afresh for an earlier owner
// of the same name. A record that cannot be written comes back unwritable:
// the uninstall goes on, reporting through logs and metrics.
func (e *Engine) openRecord(ctx context.Context, kind RecordKind, owner client.Object, createFirst bool) (*record, error) {
	log := logr.FromContextOrDiscard(ctx)
	key := client.ObjectKeyFromObject(owner)
	obj := kind.empty()
	var err error = apierrors.NewNotFound(schema.GroupResource{}, owner.GetName())
	if !createFirst {
		err = e.APIReader.Get(ctx, key, obj)
	}
	if apierrors.IsNotFound(err) {
		obj = kind.create(owner)
		log.Info("Creating the uninstall record")
		err = e.Client.Create(ctx, obj)
		if apierrors.IsAlreadyExists(err) {
			err = e.APIReader.Get(ctx, key, obj)
		}
	}
	if err != nil {
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) || apierrors.IsNotFound(err) {
			log.Info("The namespace is terminating: the uninstall goes on without its record, reporting through logs and metrics")
			recordUnwritable.Inc()
			rec := &record{uid: owner.GetUID(), st: &cleanupv1alpha1.UninstallStatus{}}
			e.carryOver(rec)
			return rec, nil
		}
		return nil, fmt.Errorf("getting the uninstall record of %s %s: %w", kind.Subject.Kind, key, err)
	}
	rec := newRecord(obj)
	if rec.uid != owner.GetUID() {
		if rec.uid != "" {
			log.Info("Starting the uninstall record afresh for a new owner of the same name", "previousUID", rec.uid)
		}
		rec = newRecord(afresh(obj, owner.GetUID()))
		rec.base, rec.prev = obj, cleanupv1alpha1.UninstallStatus{}
	}
	e.carryOver(rec)
	return rec, nil
}

// save writes the record's status when it changed.
func (e *Engine) save(ctx context.Context, rec *record) error {
	if rec.keptOn {
		rec.st.Kept = boundKept(rec.kept)
	}
	if rec.obj == nil {
		return nil
	}
	if equality.Semantic.DeepEqual(rec.base.WholeStatus(), rec.obj.WholeStatus()) {
		e.pending.drop(rec.uid)
		return nil
	}
	err := e.Client.Status().Patch(ctx, rec.obj, client.MergeFromWithOptions(rec.base, client.MergeFromWithOptimisticLock{}))
	if transient.WasLost(err) {
		// A try's reply was lost and the retries conflicted, maybe with it,
		// or failed too: when the record holds what this write says, it was
		// written, once.
		err = e.ownWrite(ctx, rec, err)
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil // the namespace is going away
		}
		e.pending.keep(rec.uid, rec.st)
		return fmt.Errorf("writing the status of uninstall record %s: %w", client.ObjectKeyFromObject(rec.obj), err)
	}
	e.pending.drop(rec.uid)
	rec.base = rec.obj.DeepCopyObject().(recordObject)
	return nil
}

// ownWrite reads the record after a status write whose reply was lost and
// whose retries conflicted or failed: when its status is what the write said, the
// write was done, and rec goes on from the record as it is (nil); else
// conflict stands.
func (e *Engine) ownWrite(ctx context.Context, rec *record, conflict error) error {
	live := rec.obj.DeepCopyObject().(recordObject)
	if err := e.APIReader.Get(ctx, client.ObjectKeyFromObject(rec.obj), live); err != nil {
		return errors.Join(conflict, err)
	}
	// Compared as the API server stores them: times to the second.
	want, err1 := json.Marshal(rec.obj.WholeStatus())
	got, err2 := json.Marshal(live.WholeStatus())
	if err1 != nil || err2 != nil || !bytes.Equal(want, got) {
		return conflict
	}
	logr.FromContextOrDiscard(ctx).V(1).Info("The record's status write was done though its reply was lost", "record", klog.KObj(live))
	copyMeta(rec.obj, live)
	return nil
}

func (rec *record) generation() int64 {
	if rec.obj == nil {
		return 0
	}
	return rec.obj.GetGeneration()
}

func (rec *record) setCondition(typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&rec.st.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: rec.generation(),
	})
}

// start marks the uninstall as under way; it reports whether it just began.
func (rec *record) start(policy string, now metav1.Time) bool {
	began := rec.st.StartTime == nil
	if began {
		rec.st.StartTime = &now
	}
	rec.st.Policy = policy
	return began
}

// deleting: the uninstall is under way and nothing blocks it.
func (rec *record) deleting(msg string) {
	rec.st.Phase, rec.st.Reason, rec.st.Message = cleanupv1alpha1.PhaseDeleting, "", msg
	rec.setCondition(cleanupv1alpha1.ConditionDeleting, metav1.ConditionTrue, "Deleting", msg)
	rec.setCondition(cleanupv1alpha1.ConditionBlocked, metav1.ConditionFalse, "NotBlocked", "Nothing blocks the uninstall")
	rec.setCondition(cleanupv1alpha1.ConditionComplete, metav1.ConditionFalse, "Deleting", "The uninstall is under way")
}

// blocked: the uninstall waits on what reason and msg say.
func (rec *record) blocked(reason, msg string) {
	rec.st.Phase, rec.st.Reason, rec.st.Message = cleanupv1alpha1.PhaseBlocked, reason, msg
	rec.setCondition(cleanupv1alpha1.ConditionDeleting, metav1.ConditionTrue, "Deleting", "The uninstall is under way")
	rec.setCondition(cleanupv1alpha1.ConditionBlocked, metav1.ConditionTrue, reason, msg)
	rec.setCondition(cleanupv1alpha1.ConditionComplete, metav1.ConditionFalse, reason, "The uninstall is blocked")
}

// finished says whether the steps left nothing the record counts as
// remaining: the record says Releasing, then Completed, only when what it
// counts is true. An error here is a step that called itself done too soon;
// the attempt fails, and the next pass counts afresh.
func (rec *record) finished() error {
	if rec.st.Remaining == 0 {
		return nil
	}
	var left []string
	for _, c := range rec.st.Counts {
		if c.Remaining > 0 {
			left = append(left, fmt.Sprintf("%d %s", c.Remaining, c.Kind))
		}
	}
	return fmt.Errorf("the steps are done but the record counts %s remaining: not releasing", strings.Join(left, ", "))
}

// releasing: every step is done; csv-cleaner's finalizer is being removed.
func (rec *record) releasing(msg string) {
	rec.st.Phase, rec.st.Reason, rec.st.Message = cleanupv1alpha1.PhaseReleasing, "", msg
	rec.st.Blocking = nil
	rec.setCondition(cleanupv1alpha1.ConditionDeleting, metav1.ConditionTrue, "Releasing", msg)
	rec.setCondition(cleanupv1alpha1.ConditionBlocked, metav1.ConditionFalse, "NotBlocked", "Nothing blocks the uninstall")
	rec.setCondition(cleanupv1alpha1.ConditionComplete, metav1.ConditionFalse, "Releasing", "The CSV is being released")
}

// completed: everything is done and the CSV was released.
func (rec *record) completed(now metav1.Time, msg string) {
	msg += ambiguousNote(rec.st)
	rec.st.Phase, rec.st.Reason, rec.st.Message = cleanupv1alpha1.PhaseCompleted, "", msg
	rec.st.CompletionTime = &now
	rec.st.Blocking = nil
	rec.setCondition(cleanupv1alpha1.ConditionDeleting, metav1.ConditionFalse, "Completed", msg)
	rec.setCondition(cleanupv1alpha1.ConditionBlocked, metav1.ConditionFalse, "NotBlocked", "Nothing blocks the uninstall")
	rec.setCondition(cleanupv1alpha1.ConditionComplete, metav1.ConditionTrue, "Completed", msg)
}

// skipped: the deletion is not an uninstall; nothing is deleted.
func (rec *record) skipped(reason, msg string, now metav1.Time) {
	rec.st.Phase, rec.st.Reason, rec.st.Message = cleanupv1alpha1.PhaseSkipped, reason, msg
	if rec.st.StartTime == nil {
		rec.st.StartTime = &now
	}
	rec.st.CompletionTime = &now
	rec.st.Blocking = nil
	rec.setCondition(cleanupv1alpha1.ConditionDeleting, metav1.ConditionFalse, reason, msg)
	rec.setCondition(cleanupv1alpha1.ConditionBlocked, metav1.ConditionFalse, "NotBlocked", "Nothing blocks the uninstall")
	rec.setCondition(cleanupv1alpha1.ConditionComplete, metav1.ConditionTrue, reason, msg)
}

// count records what a step found of one kind. found only grows across
// reconciles (objects already gone are no longer listed), so deleted is
// derived as found minus remaining.
func (rec *record) count(kind string, found, remaining int, kept map[string]int) {
	i := slices.IndexFunc(rec.st.Counts, func(k cleanupv1alpha1.KindCount) bool { return k.Kind == kind })
	if i < 0 && found == 0 && remaining == 0 && len(kept) == 0 {
		return // nothing of this kind, now or before
	}
	if i < 0 {
		rec.st.Counts = append(rec.st.Counts, cleanupv1alpha1.KindCount{Kind: kind})
		i = len(rec.st.Counts) - 1
	}
	kc := &rec.st.Counts[i]
	kc.Found = max(kc.Found, int32(found), int32(remaining))
	kc.Remaining = int32(remaining)
	// Objects kept after the timeout were found for deletion but not deleted.
	kc.Deleted = max(0, kc.Found-kc.Remaining-int32(kept[cleanupv1alpha1.KeepTimedOut]))
	kc.Kept = nil
	for _, reason := range slices.Sorted(maps.Keys(kept)) {
		kc.Kept = append(kc.Kept, cleanupv1alpha1.KeptCount{Reason: reason, Count: int32(kept[reason])})
	}
	var remainingTotal, keptTotal int32
	for _, c := range rec.st.Counts {
		remainingTotal += c.Remaining
		for _, k := range c.Kept {
			keptTotal += k.Count
		}
	}
	rec.st.Remaining, rec.st.KeptTotal = remainingTotal, keptTotal
}

// keep names objects this pass keeps; the record lists the most specific of them.
func (rec *record) keep(refs ...cleanupv1alpha1.ObjectRef) {
	rec.kept = append(rec.kept, refs...)
	if len(rec.kept) > 4*cleanupv1alpha1.MaxKept {
		rec.kept = boundKept(rec.kept)
	}
}

// keptOrder ranks the kept reasons, the most specific first: what a user
// most needs to see named when more objects stay than the record lists.
var keptOrder = []string{
	cleanupv1alpha1.KeepCreatedInDeletionSecond, cleanupv1alpha1.KeepCreatedAfterDeletion, cleanupv1alpha1.KeepSharedWithCSV, cleanupv1alpha1.KeepUnproven,
	cleanupv1alpha1.KeepSharedClusterScoped, cleanupv1alpha1.KeepOutsideTargets,
}

func keptRank(reason string) int {
	if i := slices.Index(keptOrder, reason); i >= 0 {
		return i
	}
	return len(keptOrder)
}

// boundKept sorts kept objects by keptOrder, then by kind, namespace and
// name, and keeps at most MaxKept. Pure.
func boundKept(refs []cleanupv1alpha1.ObjectRef) []cleanupv1alpha1.ObjectRef {
	slices.SortStableFunc(refs, func(a, b cleanupv1alpha1.ObjectRef) int {
		if d := keptRank(a.Reason) - keptRank(b.Reason); d != 0 {
			return d
		}
		return strings.Compare(strings.Join([]string{a.Kind, a.Namespace, a.Name}, "/"), strings.Join([]string{b.Kind, b.Namespace, b.Name}, "/"))
	})
	if len(refs) > cleanupv1alpha1.MaxKept {
		refs = refs[:cleanupv1alpha1.MaxKept]
	}
	return refs
}

// setBlocking lists up to MaxBlocking objects that the uninstall waits on.
func (rec *record) setBlocking(refs []cleanupv1alpha1.ObjectRef) {
	sort.Slice(refs, func(i, j int) bool {
		a, b := refs[i], refs[j]
		return strings.Join([]string{a.Kind, a.Namespace, a.Name}, "/") < strings.Join([]string{b.Kind, b.Namespace, b.Name}, "/")
	})
	if len(refs) > cleanupv1alpha1.MaxBlocking {
		refs = refs[:cleanupv1alpha1.MaxBlocking]
	}
	rec.st.Blocking = refs
}

// ambiguousNote tells how to finish what an uninstall kept because it could
// not tell the operands' age (CreatedInDeletionSecond); "" when it kept none.
func ambiguousNote(st *cleanupv1alpha1.UninstallStatus) string {
	var n int32
	for _, c := range st.Counts {
		for _, k := range c.Kept {
			if k.Reason == cleanupv1alpha1.KeepCreatedInDeletionSecond {
				n += k.Count
			}
		}
	}
	if n == 0 {
		return ""
	}
	why := "csv-cleaner did not see the deletion begin"
	switch {
	case st.DeletionRevision != "":
		why = "the cluster as it was at revision " + st.DeletionRevision + " could no longer be read"
	case st.DeletionRevisionFrom == cleanupv1alpha1.RevisionNotFound:
		why = "csv-cleaner did not see the deletion begin, and by the time it looked the revisions before the deletion were compacted, so its revision cannot be found"
	}
	return fmt.Sprintf("; %d operands created in the second the deletion began were kept (CreatedInDeletionSecond, named in status.kept): "+
		"%s, so whether they existed before it cannot be told; delete those that belonged to the uninstalled operator by hand", n, why)
}

package cleanup

import (
	"context"
	"fmt"
	"sync"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// deletionRevisions carries, per UID, the revision that started an object's
// deletion (the first version the watch showed with a deletionTimestamp) from
// the watch to the record's status.deletionRevision. The zero value is ready
// to use.
type deletionRevisions struct {
	mu   sync.Mutex
	seen map[types.UID]string
}

// observe remembers the revision of an update that starts a deletion.
func (d *deletionRevisions) observe(e event.UpdateEvent) {
	if e.ObjectOld == nil || e.ObjectNew == nil || e.ObjectNew.GetDeletionTimestamp().IsZero() || !e.ObjectOld.GetDeletionTimestamp().IsZero() {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seen == nil {
		d.seen = map[types.UID]string{}
	}
	if _, ok := d.seen[e.ObjectNew.GetUID()]; !ok {
		d.seen[e.ObjectNew.GetUID()] = e.ObjectNew.GetResourceVersion()
	}
}

// of returns the revision seen for uid, "" if none was.
func (d *deletionRevisions) of(uid types.UID) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.seen[uid]
}

// forget drops uid's revision once its record holds it for good (the
// uninstall is over).
func (d *deletionRevisions) forget(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.seen, uid)
}

// ObserveDeletions is a predicate that lets every event through and
// remembers the revision of each update that starts the deletion of an
// object held by csv-cleaner's finalizer (what it uninstalls: CSVs,
// ClusterExtensions); the object's removal forgets it. It goes first in the
// predicates of a watch on what csv-cleaner uninstalls, before any
// predicate that filters.
func (e *Engine) ObserveDeletions() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(ev event.UpdateEvent) bool {
			if ev.ObjectNew != nil && e.Finalizers.HeldBy(ev.ObjectNew.GetFinalizers()) {
				e.revisions.observe(ev)
			}
			return true
		},
		DeleteFunc: func(ev event.DeleteEvent) bool {
			if ev.Object != nil {
				e.revisions.forget(ev.Object.GetUID())
			}
			return true
		},
	}
}

// carryOver gives a record just read what this process holds for it beyond
// the API server: the status a failed pass could not write (pending), and
// the deletion's revision when the record has none and this process saw
// the deletion start (a record started by a csv-cleaner that was down at
// the deletion has none until an operand of the deletion's second needs it
// and the revision is searched for: DeletionSecond).
func (e *Engine) carryOver(rec *record) {
	e.pending.apply(rec)
	if rec.st.DeletionRevision == "" {
		if rev := e.revisions.of(rec.uid); rev != "" {
			rec.st.DeletionRevision, rec.st.DeletionRevisionFrom = rev, cleanupv1alpha1.RevisionFromWatch
		}
	}
}

// RecordedRevision returns the deletion revision that subject's uninstall
// record holds (a CSVCleanup for a CSV, an ExtensionCleanup for anything
// else, each of the subject's UID) and how it was found, "" when there is
// none: what a plan reads to decide the operands of the deletion's second
// as the run does.
func (g Gatherer) RecordedRevision(ctx context.Context, subject client.Object) (revision, from string, _ error) {
	kind := Extensions
	if _, isCSV := subject.(*operatorsv1alpha1.ClusterServiceVersion); isCSV {
		kind = CSVs
	}
	obj := kind.empty()
	if err := g.Live.Get(ctx, client.ObjectKeyFromObject(subject), obj); err != nil {
		if apierrors.IsNotFound(err) {
			return "", "", nil
		}
		return "", "", fmt.Errorf("reading the uninstall record of %s: %w", klog.KObj(subject), err)
	}
	rec := newRecord(obj)
	if rec.uid != subject.GetUID() {
		return "", "", nil
	}
	return rec.st.DeletionRevision, rec.st.DeletionRevisionFrom, nil
}

// DeletionChanged lets through the updates that start (or undo) an object's deletion.
var DeletionChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !e.ObjectOld.GetDeletionTimestamp().Equal(e.ObjectNew.GetDeletionTimestamp())
	},
}

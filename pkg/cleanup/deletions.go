package cleanup

import (
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

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
				e.revisions.Observe(ev)
			}
			return true
		},
		DeleteFunc: func(ev event.DeleteEvent) bool {
			if ev.Object != nil {
				e.revisions.Forget(ev.Object.GetUID())
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
// and the revision is searched for: revision.Second).
func (e *Engine) carryOver(rec *record) {
	e.pending.apply(rec)
	if rec.st.DeletionRevision == "" {
		if rev := e.revisions.Of(rec.uid); rev != "" {
			rec.st.DeletionRevision, rec.st.DeletionRevisionFrom = rev, cleanupv1alpha1.RevisionFromWatch
		}
	}
}

// DeletionChanged lets through the updates that start (or undo) an object's deletion.
var DeletionChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !e.ObjectOld.GetDeletionTimestamp().Equal(e.ObjectNew.GetDeletionTimestamp())
	},
}

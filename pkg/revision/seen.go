package revision

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// Seen carries, per UID, the revision that started an object's
// deletion (the first version the watch showed with a deletionTimestamp) from
// the watch to the record's status.deletionRevision. The zero value is ready
// to use.
type Seen struct {
	mu   sync.Mutex
	seen map[types.UID]string
}

// Observe remembers the revision of an update that starts a deletion.
func (d *Seen) Observe(e event.UpdateEvent) {
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

// Of returns the revision seen for uid, "" if none was.
func (d *Seen) Of(uid types.UID) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.seen[uid]
}

// Forget drops uid's revision once its record holds it for good (the
// uninstall is over).
func (d *Seen) Forget(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.seen, uid)
}

package cleanup

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// pendingRecords holds, per CSV or ClusterExtension, the record's status that a pass could not
// write (save failed). The next pass, and the Retrying mark, start from it
// rather than from the record as stored, so that what the failed pass did
// is still counted: the objects it deleted are no longer found, and a count
// derived from what is found would say less than was done. It lives as long
// as the process; a restart starts from the stored record.
type pendingRecords struct {
	mu  sync.Mutex
	csv map[types.UID]*cleanupv1alpha1.UninstallStatus
}

// keep remembers st as the newest status of the owner's record.
func (p *pendingRecords) keep(uid types.UID, st *cleanupv1alpha1.UninstallStatus) {
	if uid == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.csv == nil {
		p.csv = map[types.UID]*cleanupv1alpha1.UninstallStatus{}
	}
	p.csv[uid] = st.DeepCopy()
}

// drop forgets the owner's pending status: the record holds it now.
func (p *pendingRecords) drop(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.csv, uid)
}

// has reports whether a status of the owner's record waits to be written.
func (p *pendingRecords) has(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.csv[uid]
	return ok
}

// apply puts the owner's pending status, if any, into rec: its base stays the
// record as stored, so that the next write carries what the failed one did.
func (p *pendingRecords) apply(rec *record) {
	if rec.obj == nil {
		return
	}
	p.mu.Lock()
	st := p.csv[rec.uid]
	p.mu.Unlock()
	if st == nil {
		return
	}
	rec.st = setStatus(rec.obj, *st.DeepCopy())
	rec.prev = *st.DeepCopy()
}

package backupgate

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// Plans keeps, per owner, what the plan deleted when this process made
// the uninstall's Backup, for the pass that verifies it (verifiedDestroyed).
type Plans struct {
	mu sync.Mutex
	m  map[types.UID]*planned
}

// planned is what an uninstall's plan deletes, and the kinds whose
// instances it deletes (which it lists itself: a scan of its dependents
// skips them).
type planned struct {
	deletions []decide.Held
	kinds     []decide.CRDScope
	// origins are the instances among the deletions as they are.
	origins []decide.Origin
}

func (b *Plans) keep(uid types.UID, p *planned) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[types.UID]*planned{}
	}
	b.m[uid] = p
}

// take returns what was kept for uid, and forgets it.
func (b *Plans) take(uid types.UID) *planned {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.m[uid]
	delete(b.m, uid)
	return d
}

// Forget forgets what was kept for uid: its uninstall is over.
func (b *Plans) Forget(uid types.UID) { b.take(uid) }

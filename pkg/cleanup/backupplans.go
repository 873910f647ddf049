package cleanup

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// backupPlans keeps, from the pass that made an uninstall's Backup to the
// one that verifies it, what the plan deleted when the Backup was made:
// the verification checks the resource list against it rather than plan
// the uninstall a second time (about a second at 10,000 operands). A
// verification that finds an object missing plans afresh before it
// blocks (someone may have deleted it meanwhile), and a restart, which
// forgets them, plans afresh too.
type backupPlans struct {
	mu sync.Mutex
	m  map[types.UID]*planned
}

// planned is what an uninstall's plan deletes, and the kinds whose
// instances it deletes (which it lists itself: a scan of its dependents
// skips them).
type planned struct {
	deletions []decide.Held
	kinds     []decide.CRDScope
}

func (b *backupPlans) keep(uid types.UID, p *planned) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[types.UID]*planned{}
	}
	b.m[uid] = p
}

// take returns what was kept for uid, and forgets it.
func (b *backupPlans) take(uid types.UID) *planned {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.m[uid]
	delete(b.m, uid)
	return d
}

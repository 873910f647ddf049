package cleanup

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
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
	m  map[types.UID][]plan.Held
}

func (b *backupPlans) keep(uid types.UID, deletions []plan.Held) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[types.UID][]plan.Held{}
	}
	b.m[uid] = deletions
}

// take returns what was kept for uid, and forgets it.
func (b *backupPlans) take(uid types.UID) []plan.Held {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.m[uid]
	delete(b.m, uid)
	return d
}

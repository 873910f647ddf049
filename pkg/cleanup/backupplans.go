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
// forgets them, plans afresh too. It keeps too which DownloadRequest of
// the Backup's resource list was asked for while the Backup ran, so that
// it is asked once.
type backupPlans struct {
	mu sync.Mutex
	m  map[types.UID]*keptBackup
}

// keptBackup is what backupPlans keeps of one uninstall's Backup.
type keptBackup struct {
	deletions []plan.Deletion
	// listAsked names the DownloadRequest asked for ("" before).
	listAsked string
}

func (b *backupPlans) keep(uid types.UID, deletions []plan.Deletion) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[types.UID]*keptBackup{}
	}
	b.m[uid] = &keptBackup{deletions: deletions}
}

// askList reports whether the DownloadRequest called name is still to be
// asked for the uninstall uid, and notes that it is asked now.
func (b *backupPlans) askList(uid types.UID, name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[types.UID]*keptBackup{}
	}
	k := b.m[uid]
	if k == nil {
		k = &keptBackup{}
		b.m[uid] = k
	}
	if k.listAsked == name {
		return false
	}
	k.listAsked = name
	return true
}

// take returns the deletions kept for uid, and forgets all it kept of it.
func (b *backupPlans) take(uid types.UID) []plan.Deletion {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.m[uid]
	delete(b.m, uid)
	if k == nil {
		return nil
	}
	return k.deletions
}

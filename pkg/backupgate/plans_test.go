package backupgate

import (
	"testing"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// TestBackupPlans: what the Backup was made of is given once, to the
// verification.
func TestBackupPlans(t *testing.T) {
	var b Plans
	d := &planned{deletions: []decide.Held{{Group: "example.com", Kind: "Widget", Namespace: "a", Name: "w1"}}}
	b.keep("u1", d)
	if got := b.take("u1"); got != d {
		t.Errorf("take(u1) = %v, want %v", got, d)
	}
	if got := b.take("u1"); got != nil {
		t.Errorf("take(u1) again = %v, want nothing: it is forgotten", got)
	}
	if got := b.take("u2"); got != nil {
		t.Errorf("take(u2) = %v, want nothing: no plan was kept for it", got)
	}
}

package undoplan

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// TestNextRestore: a Restore under way is followed; an ended one never is:
// the next attempt of the same objects is made, numbered after the last.
func TestNextRestore(t *testing.T) {
	const backup = "csv-cleaner-db-v1-0123456789"
	missing := []decide.Held{widget, secret}
	first, second := Name(backup, missing, 1), Name(backup, missing, 2)
	other := Name(backup, []decide.Held{widget}, 1)
	for _, tt := range []struct {
		name        string
		made        []Made
		follow      string
		attempt     int
		wantName    string
		afterAttmpt int
	}{
		{name: "none made: the first attempt", attempt: 1, wantName: first},
		{name: "one under way, of other objects: followed", made: []Made{{Name: other, Attempt: 1, UnderWay: true}}, follow: other},
		{name: "the first failed: the second", made: []Made{{Name: first, Attempt: 1, Failed: true}}, attempt: 2, wantName: second, afterAttmpt: 1},
		{name: "the first completed and left them missing: the second, not the first again", made: []Made{{Name: first, Attempt: 1}}, attempt: 2, wantName: second, afterAttmpt: 1},
		{name: "two failed: the third", made: []Made{{Name: first, Attempt: 1, Failed: true}, {Name: second, Attempt: 2, Failed: true}}, attempt: 3,
			wantName: Name(backup, missing, 3), afterAttmpt: 2},
		{name: "an ended Restore of other objects does not count", made: []Made{{Name: other, Attempt: 1, Failed: true}}, attempt: 1, wantName: first},
		{name: "the second under way after the first failed: followed", made: []Made{{Name: first, Attempt: 1, Failed: true}, {Name: second, Attempt: 2, UnderWay: true}}, follow: second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := NextRestore(backup, missing, tt.made)
			if got.Follow != tt.follow || got.Attempt != tt.attempt && tt.follow == "" || got.Name != tt.wantName {
				t.Fatalf("NextRestore = %+v, want follow %q, attempt %d, name %q", got, tt.follow, tt.attempt, tt.wantName)
			}
			switch {
			case tt.afterAttmpt == 0 && got.After != nil:
				t.Errorf("after %+v, want none", got.After)
			case tt.afterAttmpt > 0 && (got.After == nil || got.After.Attempt != tt.afterAttmpt):
				t.Errorf("after %+v, want attempt %d", got.After, tt.afterAttmpt)
			}
		})
	}
}

// TestNameOfAnAttempt: the first attempt keeps the name undos gave their
// Restore before attempts were counted; the next ones end in -n, at most
// 63 characters however long the Backup's name.
func TestNameOfAnAttempt(t *testing.T) {
	long := "csv-cleaner-" + strings.Repeat("x", 44) + "-0123456789-12"
	missing := []decide.Held{widget}
	if a, b := Name("b", missing, 1), Name("b", missing, 0); a != b || strings.Count(a, "-") != 2 {
		t.Errorf("the first attempt = %q and %q", a, b)
	}
	for _, attempt := range []int{2, 10, 123} {
		n := Name(long, missing, attempt)
		if len(n) > 63 || !strings.HasSuffix(n, "-"+strconv.Itoa(attempt)) {
			t.Errorf("attempt %d = %q (%d characters)", attempt, n, len(n))
		}
	}
}

// TestRetryAt: 30 s after the first failure, doubling, at most an hour.
func TestRetryAt(t *testing.T) {
	ended := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for attempt, want := range map[int]time.Duration{1: 30 * time.Second, 2: time.Minute, 3: 2 * time.Minute, 8: time.Hour, 40: time.Hour} {
		if got := RetryAt(Made{Attempt: attempt, Ended: ended}).Sub(ended); got != want {
			t.Errorf("attempt %d: retried %s after, want %s", attempt, got, want)
		}
	}
}

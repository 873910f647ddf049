package revision

import (
	"errors"
	"testing"
)

// history is an object's story in revisions: compacted below compactedTo,
// absent until created, live until deleted, deleting from then on.
type history struct{ compactedTo, created, deleted uint64 }

func (h history) at(rev uint64) (revisionState, error) {
	switch {
	case rev < h.compactedTo:
		return atCompacted, nil
	case rev < h.created:
		return atAbsent, nil
	case rev < h.deleted:
		return atLive, nil
	}
	return atDeleting, nil
}

func TestSearchFirstDeleting(t *testing.T) {
	for _, tt := range []struct {
		name    string
		h       history
		hi      uint64
		want    string
		maxList int
	}{
		{"nothing compacted", history{compactedTo: 1, created: 10, deleted: 500}, 900, "500", 12},
		{"compacted well before the deletion", history{compactedTo: 400, created: 10, deleted: 500}, 900, "500", 12},
		{"the revision just before the deletion still served", history{compactedTo: 499, created: 10, deleted: 500}, 900, "500", 12},
		{"compacted up to the deletion: not known", history{compactedTo: 500, created: 10, deleted: 500}, 900, "", 12},
		{"compacted past the deletion: not known", history{compactedTo: 700, created: 10, deleted: 500}, 900, "", 12},
		{"deleted in the write after its creation", history{compactedTo: 1, created: 41, deleted: 42}, 43, "42", 8},
		{"deleted at its own revision", history{compactedTo: 1, created: 10, deleted: 900}, 900, "900", 12},
		{"a large history: about log2 of it", history{compactedTo: 3_000_000, created: 2_000_000, deleted: 3_500_123}, 3_600_000, "3500123", 24},
		{"compacted past its own revision", history{compactedTo: 950, created: 10, deleted: 500}, 900, "", 1},
		{"not being deleted (a plan's hypothesis)", history{compactedTo: 1, created: 10, deleted: 1000}, 900, "", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := searchFirstDeleting(tt.hi, tt.h.at)
			if err != nil {
				t.Fatal(err)
			}
			if got.Revision != tt.want {
				t.Errorf("revision = %q (%s), want %q", got.Revision, got.Why, tt.want)
			}
			if got.Revision == "" && got.Why == "" {
				t.Error("no revision and no reason why")
			}
			if got.Lists > tt.maxList {
				t.Errorf("%d lists, want at most %d", got.Lists, tt.maxList)
			}
		})
	}
}

func TestSearchFirstDeletingFails(t *testing.T) {
	boom := errors.New("connection refused")
	calls := 0
	_, err := searchFirstDeleting(100, func(rev uint64) (revisionState, error) {
		calls++
		if calls == 3 {
			return atAbsent, boom
		}
		return history{compactedTo: 1, created: 2, deleted: 50}.at(rev)
	})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want the request's error", err)
	}
}

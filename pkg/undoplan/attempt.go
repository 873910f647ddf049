package undoplan

import (
	"time"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// Made is a Restore an undo made from the Backup it restores from, as the
// undo finds it. Velero never tries a Restore again once it failed, and a
// Restore's name is taken for good.
type Made struct {
	Name string
	// Attempt numbers the Restores of the same objects (1 the first).
	Attempt int
	// UnderWay: it has not ended. Failed: it ended Failed or
	// FailedValidation.
	UnderWay, Failed bool
	// Ended is when it ended (when it was made, where Velero did not say).
	Ended time.Time
}

// Next is what an undo does about its Restore when it has none of its own
// to follow: follow another under way, or make the attempt Attempt, called
// Name; After is the last attempt of the same objects, nil for the first.
type Next struct {
	Follow  string
	Attempt int
	Name    string
	After   *Made
}

// NextRestore decides what an undo of missing from backup does about its
// Restore, given those made from the Backup for the same owner (made,
// oldest first): it follows one under way (an undo interrupted and run
// again, or two undos of one uninstall, make one Restore); else it makes
// the next attempt of these objects, one after the last that ended, and
// never follows an ended one: a Restore that failed (its storage was
// down) stays failed, and one that completed and left these objects
// missing did not bring them back.
func NextRestore(backup string, missing []decide.Held, made []Made) Next {
	for _, m := range made {
		if m.UnderWay {
			return Next{Follow: m.Name}
		}
	}
	next := Next{Attempt: 1}
	for i := range made {
		if m := &made[i]; m.Name == Name(backup, missing, m.Attempt) && m.Attempt >= next.Attempt {
			next.Attempt, next.After = m.Attempt+1, m
		}
	}
	next.Name = Name(backup, missing, next.Attempt)
	return next
}

// How long an Undo waits after its Restore failed before it makes the
// next: restoreRetryMin, doubling with each attempt, at most
// restoreRetryMax. It makes it only once Velero's storage location is
// Available, which is what failed most of the time.
const (
	restoreRetryMin = 30 * time.Second
	restoreRetryMax = time.Hour
)

// RetryAt is when an Undo makes its next attempt after its Restore failed:
// 30 s after the failed one ended, then 1, 2, 4 ... minutes after each
// further one, at most an hour apart (as the gate retries a Backup).
func RetryAt(failed Made) time.Time {
	backoff := restoreRetryMin << min(max(failed.Attempt-1, 0), 7)
	return failed.Ended.Add(min(backoff, restoreRetryMax))
}

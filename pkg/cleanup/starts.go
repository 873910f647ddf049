package cleanup

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// startTurns lets the acknowledger and the uninstall, which both start an
// uninstall's record, take turns per CSV, and remembers which CSVs this
// process started. Without it both could write the same start in the same
// second, each see its reply lost, each find its content in the record
// (ownWrite) and each send CleanupStarted.
type startTurns struct {
	mu   sync.Mutex
	csvs map[types.UID]*startTurn
}

// startTurn is one owner's: held while its record is being started.
type startTurn struct {
	sync.Mutex
	// started: this process wrote the record's start and sent CleanupStarted.
	started bool
	// unsure: this process's write of the start failed in a way that leaves
	// its outcome unknown (a lost reply, a 500 after the write was done).
	unsure bool
}

// take waits for the owner's turn; the caller unlocks it.
func (t *startTurns) take(uid types.UID) *startTurn {
	t.mu.Lock()
	if t.csvs == nil {
		t.csvs = map[types.UID]*startTurn{}
	}
	turn := t.csvs[uid]
	if turn == nil {
		turn = &startTurn{}
		t.csvs[uid] = turn
	}
	t.mu.Unlock()
	turn.Lock()
	return turn
}

// confirm reports, once, that a start this process wrote without knowing
// it (unsure) is in the record: the caller sends the CleanupStarted that the
// write's lost reply kept back. Nobody else writes an uninstall's start while
// this process holds the leader lease, and the other starter in this process
// takes the turn and marks it started.
func (t *startTurns) confirm(uid types.UID) bool {
	t.mu.Lock()
	turn := t.csvs[uid]
	t.mu.Unlock()
	if turn == nil {
		return false
	}
	turn.Lock()
	defer turn.Unlock()
	if !turn.unsure || turn.started {
		return false
	}
	turn.unsure, turn.started = false, true
	return true
}

// forget drops a CSV whose uninstall ended.
func (t *startTurns) forget(uid types.UID) {
	t.mu.Lock()
	delete(t.csvs, uid)
	t.mu.Unlock()
}

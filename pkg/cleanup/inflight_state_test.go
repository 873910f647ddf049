package cleanup

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// A pass whose status write failed must not lose its counts: the next pass
// starts from the status it could not write, on the record as stored.
func TestPendingStatusCarriesAFailedWrite(t *testing.T) {
	const uid = types.UID("csv-1")
	stored := func() *record {
		obj := &cleanupv1alpha1.CSVCleanup{Status: cleanupv1alpha1.CSVCleanupStatus{CSVUID: uid}}
		obj.ResourceVersion = "7"
		return newRecord(obj)
	}
	var p pendingRecords

	// The failed pass deleted 2 Widgets; its write was refused.
	failed := stored()
	failed.count("Widget.example.com", 2, 0, nil)
	p.keep(uid, failed.st)
	failed.st.Counts[0].Found = 99 // the caller's copy is not the kept one

	next := stored()
	p.apply(next)
	if len(next.st.Counts) != 1 || next.st.Counts[0].Found != 2 || next.st.Counts[0].Deleted != 2 {
		t.Fatalf("the next pass must start from the unwritten counts, got %+v", next.st.Counts)
	}
	if base := next.base.(*cleanupv1alpha1.CSVCleanup); base.ResourceVersion != "7" || len(base.Status.Counts) != 0 {
		t.Fatalf("the patch's base must stay the record as stored, got %+v", next.base)
	}
	// The next pass finds nothing left (the Widgets are gone): the counts hold.
	next.count("Widget.example.com", 0, 0, nil)
	if next.st.Counts[0].Found != 2 || next.st.Counts[0].Deleted != 2 {
		t.Fatalf("what the failed pass did must still be counted, got %+v", next.st.Counts[0])
	}

	// Once written, nothing is pending: another CSV's record is untouched too.
	p.drop(uid)
	again := stored()
	p.apply(again)
	if len(again.st.Counts) != 0 {
		t.Fatalf("a dropped status must not come back, got %+v", again.st.Counts)
	}
	p.apply(&record{}) // a CSV without a record
}

// A start whose write's outcome is unknown is confirmed once, by the first
// pass that finds it in the record, and not when the other starter wrote it.
func TestStartTurnsConfirmAnUnsureStart(t *testing.T) {
	var turns startTurns
	if turns.confirm("never-started") {
		t.Fatal("a CSV this process never started must not be confirmed")
	}

	turn := turns.take("a")
	turn.unsure = true // the start's write failed after it may have been done
	turn.Unlock()
	if !turns.confirm("a") {
		t.Fatal("an unsure start found in the record must be confirmed")
	}
	if turns.confirm("a") {
		t.Fatal("a start must be confirmed once")
	}

	turn = turns.take("b")
	turn.unsure = true
	turn.started = true // the other starter wrote it, and sent CleanupStarted
	turn.Unlock()
	if turns.confirm("b") {
		t.Fatal("a start the other starter wrote must not be confirmed again")
	}

	turns.forget("a")
	if turns.confirm("a") {
		t.Fatal("a forgotten CSV must not be confirmed")
	}
}

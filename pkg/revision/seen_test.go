package revision

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

func csvVersion(rv string, deleting bool) *metav1.PartialObjectMetadata {
	m := objects.CSVMetadata()
	m.UID, m.ResourceVersion = "u1", rv
	if deleting {
		now := metav1.Now()
		m.DeletionTimestamp = &now
	}
	return m
}

// TestDeletionRevisions: only the update that sets the deletionTimestamp
// gives the revision, and the first one seen stays.
func TestDeletionRevisions(t *testing.T) {
	var d Seen
	d.Observe(event.UpdateEvent{ObjectOld: csvVersion("10", false), ObjectNew: csvVersion("11", false)})
	if got := d.Of("u1"); got != "" {
		t.Fatalf("an update that deletes nothing gave revision %q", got)
	}
	d.Observe(event.UpdateEvent{ObjectOld: csvVersion("11", false), ObjectNew: csvVersion("12", true)})
	d.Observe(event.UpdateEvent{ObjectOld: csvVersion("12", true), ObjectNew: csvVersion("13", true)})
	if got := d.Of("u1"); got != "12" {
		t.Fatalf("revision = %q, want 12, the version that set the deletionTimestamp", got)
	}
	d.Observe(event.UpdateEvent{ObjectOld: csvVersion("11", false), ObjectNew: csvVersion("14", true)}) // a relist's late look
	if got := d.Of("u1"); got != "12" {
		t.Fatalf("revision = %q after a later look, want 12 kept", got)
	}
	d.Forget("u1")
	if got := d.Of("u1"); got != "" {
		t.Fatalf("revision = %q after forget", got)
	}
}

package cleanup

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
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
	var d deletionRevisions
	d.observe(event.UpdateEvent{ObjectOld: csvVersion("10", false), ObjectNew: csvVersion("11", false)})
	if got := d.of("u1"); got != "" {
		t.Fatalf("an update that deletes nothing gave revision %q", got)
	}
	d.observe(event.UpdateEvent{ObjectOld: csvVersion("11", false), ObjectNew: csvVersion("12", true)})
	d.observe(event.UpdateEvent{ObjectOld: csvVersion("12", true), ObjectNew: csvVersion("13", true)})
	if got := d.of("u1"); got != "12" {
		t.Fatalf("revision = %q, want 12, the version that set the deletionTimestamp", got)
	}
	d.observe(event.UpdateEvent{ObjectOld: csvVersion("11", false), ObjectNew: csvVersion("14", true)}) // a relist's late look
	if got := d.of("u1"); got != "12" {
		t.Fatalf("revision = %q after a later look, want 12 kept", got)
	}
	d.forget("u1")
	if got := d.of("u1"); got != "" {
		t.Fatalf("revision = %q after forget", got)
	}
}

// TestAmbiguousNote: the record's message says how to finish only when it
// kept operands of unknown age, and why their age is unknown.
func TestAmbiguousNote(t *testing.T) {
	st := &cleanupv1alpha1.UninstallStatus{Counts: []cleanupv1alpha1.KindCount{{Kind: "Widget.example.com",
		Kept: []cleanupv1alpha1.KeptCount{{Reason: cleanupv1alpha1.KeepCreatedAfterDeletion, Count: 4}}}}}
	if note := ambiguousNote(st); note != "" {
		t.Fatalf("note without ambiguous operands: %q", note)
	}
	st.Counts[0].Kept = append(st.Counts[0].Kept, cleanupv1alpha1.KeptCount{Reason: cleanupv1alpha1.KeepCreatedInDeletionSecond, Count: 2})
	note := ambiguousNote(st)
	for _, want := range []string{"2 operands", "did not see the deletion begin", "by hand"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	st.DeletionRevision = "1234"
	if note := ambiguousNote(st); !strings.Contains(note, "revision 1234 could no longer be read") {
		t.Errorf("note %q does not say the revision was compacted", note)
	}
}

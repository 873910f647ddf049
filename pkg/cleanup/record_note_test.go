package cleanup

import (
	"strings"
	"testing"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

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

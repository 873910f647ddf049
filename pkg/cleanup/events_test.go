package cleanup

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCutNote: an Event's note fits the API server's 1 KB, cut on a
// character's boundary; a short one is left whole.
func TestCutNote(t *testing.T) {
	for _, note := range []string{"short", strings.Repeat("é", 600), strings.Repeat("a", 1023) + "é"} {
		got := cutNote(note)
		switch {
		case len(got) > maxNote:
			t.Errorf("cutNote(%d bytes) = %d bytes, more than %d", len(note), len(got), maxNote)
		case !utf8.ValidString(got):
			t.Errorf("cutNote(%d bytes) cut a character", len(note))
		case len(note) <= maxNote && got != note:
			t.Errorf("cutNote(%q) = %q, want it whole", note, got)
		}
	}
}

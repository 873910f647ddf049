package undo

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// TestRowsName: the rows' ConfigMap is the Undo's name with -rows, cut to
// a name a ConfigMap may have, never ending in a dot or a dash before it.
func TestRowsName(t *testing.T) {
	for _, tc := range []struct {
		undo, want string
	}{
		{"op.v1-abcde", "op.v1-abcde-rows"},
		{strings.Repeat("a", 248), strings.Repeat("a", 248) + "-rows"},
		{strings.Repeat("a", 249), strings.Repeat("a", 248) + "-rows"},
		{strings.Repeat("a", 247) + ".b", strings.Repeat("a", 247) + "-rows"},
	} {
		got := RowsName(tc.undo)
		if got != tc.want {
			t.Errorf("RowsName(%d characters) = %q, want %q", len(tc.undo), got, tc.want)
		}
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Errorf("RowsName(%d characters) = %q: %v", len(tc.undo), got, errs)
		}
	}
}

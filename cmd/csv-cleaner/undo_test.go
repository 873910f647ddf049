package main

import (
	"io"
	"strings"
	"testing"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// TestUndoCommandLine: the command an uninstall's messages say is one
// `csv-cleaner undo` reads back as the same owner.
func TestUndoCommandLine(t *testing.T) {
	for _, owner := range []decide.Owner{
		{Kind: decide.KindCSV, Namespace: "operators", Name: "my-operator.v1.2.3"},
		{Kind: decide.KindExtension, Name: "my-extension"},
	} {
		line := undoCommandLine(owner)
		words := strings.Fields(line)
		if len(words) < 3 || words[0] != "csv-cleaner" || words[1] != "undo" {
			t.Fatalf("%s: %q is not a csv-cleaner undo command", owner, line)
		}
		cmd := newUndoCommand(io.Discard, io.Discard)
		if err := cmd.ParseFlags(words[2:]); err != nil {
			t.Fatalf("%s: %q: %v", owner, line, err)
		}
		namespace, _ := cmd.Flags().GetString("namespace")
		got, err := undoOwner(namespace, cmd.Flags().Args())
		if err != nil || got != owner {
			t.Errorf("%q reads back as %+v (%v), want %+v", line, got, err, owner)
		}
	}
}

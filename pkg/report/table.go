package report

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// table writes aligned columns, and keeps the first error it meets.
type table struct {
	tw  *tabwriter.Writer
	err error
}

func newTable(w io.Writer) *table { return &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)} }

// printf writes a line, or part of one; nothing once a write failed.
func (t *table) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.tw, format, args...)
	}
}

// flush writes out what is buffered, and says what failed to be written.
func (t *table) flush(what string) error {
	if t.err == nil {
		t.err = t.tw.Flush()
	}
	if t.err != nil {
		return fmt.Errorf("writing %s: %w", what, t.err)
	}
	return nil
}

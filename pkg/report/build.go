package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
)

// Build is what `csv-cleaner version` prints of a binary, with these JSON keys.
type Build struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Date     string `json:"date,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// Line is the build for a person: "csv-cleaner 0.1.0 (commit abc, built DATE, go1.26 linux/amd64)".
func (b Build) Line() string {
	return fmt.Sprintf("csv-cleaner %s (commit %s, built %s, %s %s)", b.Version, cmp.Or(b.Commit, "unknown"), cmp.Or(b.Date, "unknown"), b.Go, b.Platform)
}

// BuildJSON prints the build for a program.
func BuildJSON(w io.Writer, b Build) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(b); err != nil {
		return fmt.Errorf("writing the version: %w", err)
	}
	return nil
}

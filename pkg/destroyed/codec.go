package destroyed

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Encode writes r at CurrentVersion as gzipped JSON.
func Encode(r *Record) ([]byte, error) {
	out := *r
	out.Version = CurrentVersion
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	if err := errors.Join(json.NewEncoder(z).Encode(&out), z.Close()); err != nil {
		return nil, fmt.Errorf("writing what the uninstall destroys: %w", err)
	}
	return buf.Bytes(), nil
}

// Decode reads a record Encode wrote, of this version or an earlier one,
// reading at most limit bytes of JSON. A record of a later version (a newer
// csv-cleaner's) is refused: read by this one, it could restore less, or
// other, than the uninstall destroyed.
func Decode(gz []byte, limit int64) (*Record, error) {
	z, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("reading what the uninstall destroyed: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(z, limit))
	if err != nil {
		return nil, fmt.Errorf("reading what the uninstall destroyed: %w", err)
	}
	var version struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(raw, &version); err != nil {
		return nil, fmt.Errorf("reading what the uninstall destroyed: %w", err)
	}
	switch version.Version {
	case 0, 1: // 0: written before records had a version, in version 1's shape
		r := &Record{}
		if err := json.Unmarshal(raw, r); err != nil {
			return nil, fmt.Errorf("reading what the uninstall destroyed (version %d): %w", version.Version, err)
		}
		r.Version = 1
		return r, nil
	}
	return nil, fmt.Errorf("what the uninstall destroyed was written at version %d, by a newer csv-cleaner than this one (which reads up to %d): undo with that csv-cleaner", version.Version, CurrentVersion)
}

package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Merge writes the figures of a run of one part (BENCH_ONLY) into dir's
// benchmarks.json over the keys that part measured, and names the part's
// run under run.parts: the other figures, benchmarks.md and benchmarks.svg
// stay those of the last whole make bench.
func (r Report) Merge(dir, part string) error {
	path := filepath.Join(dir, "benchmarks.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading the whole run's figures to merge into: %w", err)
	}
	out, err := mergeFigures(raw, r.Figures(), part, r.runInfo(map[string]any{"command": benchCommand(os.Environ())}))
	if err != nil {
		return fmt.Errorf("merging into %s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}

// mergeFigures puts figures over doc's and run under doc.run.parts[part];
// every other key of doc stays.
func mergeFigures(doc []byte, figures [][2]any, part string, run map[string]any) ([]byte, error) {
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	have, ok := d["figures"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no figures object")
	}
	for _, f := range figures {
		have[f[0].(string)] = f[1]
	}
	meta, _ := d["run"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		d["run"] = meta
	}
	parts, _ := meta["parts"].(map[string]any)
	if parts == nil {
		parts = map[string]any{}
		meta["parts"] = parts
	}
	parts[part] = run
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// benchCommand is the command that made a run: its BENCH_ variables, sorted.
func benchCommand(env []string) string {
	var vars []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "BENCH_") && !strings.HasPrefix(kv, "BENCH_REPORT_DIR=") {
			vars = append(vars, kv)
		}
	}
	slices.Sort(vars)
	return strings.TrimSpace(strings.Join(vars, " ") + " go test ./test/bench -run TestBench")
}

package bench

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestMergeFigures(t *testing.T) {
	whole := []byte(`{"figures": {"uninstall_seconds_1k": 2.1, "undo_seconds_1k": 254.08}, "run": {"date": "2026-11-28T01:36:20Z"}}`)
	got, err := mergeFigures(whole, [][2]any{{"undo_seconds_1k", 280.7}, {"undoable_uninstall_seconds_1k_w1", 1190.2}},
		"undo", map[string]any{"command": "BENCH_ONLY=undo go test ./test/bench -run TestBench"})
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(got, &d); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"figures": map[string]any{"uninstall_seconds_1k": 2.1, "undo_seconds_1k": 280.7, "undoable_uninstall_seconds_1k_w1": 1190.2},
		"run": map[string]any{"date": "2026-11-28T01:36:20Z",
			"parts": map[string]any{"undo": map[string]any{"command": "BENCH_ONLY=undo go test ./test/bench -run TestBench"}}},
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("merged:\n%s\nwant the part's figures over the whole run's, the rest kept, and the part's run named", got)
	}
	for _, bad := range []string{`not json`, `{"run": {}}`} {
		if _, err := mergeFigures([]byte(bad), nil, "undo", nil); err == nil {
			t.Errorf("mergeFigures(%s) = nil error, want one", bad)
		}
	}
}

func TestBenchCommand(t *testing.T) {
	got := benchCommand([]string{"HOME=/root", "BENCH_UNDOABLE=1000", "BENCH_REPORT_DIR=/x/docs", "BENCH_ONLY=undo"})
	if want := "BENCH_ONLY=undo BENCH_UNDOABLE=1000 go test ./test/bench -run TestBench"; got != want {
		t.Errorf("benchCommand() = %q, want %q", got, want)
	}
}

// A run of one part reports only that part's figures, so that its merge
// leaves every other part's as the whole run measured them.
func TestFiguresOfOnePart(t *testing.T) {
	r := Report{UndoableAt: []Undoable{{Operands: 1000, Workers: 16}}}
	for _, f := range r.Figures() {
		if key := f[0].(string); !strings.HasPrefix(key, "undoable_") {
			t.Errorf("a run of the undoable part alone reports %s", key)
		}
	}
}

package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Scale is the sizes of one run.
type Scale struct {
	Name string
	// Operands are the sizes of the throughput benchmark, each run
	// ThroughputRuns times (the uninstall and the floor taking turns at going first).
	Operands       []int
	ThroughputRuns int
	// ResumeOperands is the size of the resume benchmark.
	ResumeOperands int
	// Fleets are the numbers of CSVs of the memory benchmark (90 % copies).
	Fleets []int
	// Unrelated is how many unrelated custom resources exist.
	Unrelated int
	// IdleManaged CSVs are managed during IdleWindow.
	IdleManaged int
	IdleWindow  time.Duration
	// SelfRelease is how many managed CSVs csv-cleaner releases on its own uninstall.
	SelfRelease int
	// BurstCSVs are deleted at once, each owning one CRD with BurstOperands operands.
	BurstCSVs, BurstOperands int
	// Startup are the numbers of managed CSVs of the first-start benchmark.
	Startup []int
	// SideBySide is how many operands each tool users run today uninstalls side by side.
	SideBySide int
	// Faults is the size of the throughput run behind the fault proxy (one of Operands).
	Faults int
	// Extension is the size of the ClusterExtension's throughput run.
	Extension int
	// Backup is the size of the uninstall under a policy's backup, with real Velero.
	Backup int
	// Undoable is the size of the uninstall under a policy's backup whose
	// operands own a Secret and a claim each, and of its undo.
	Undoable int
	// VeleroWorkers are the item-block worker counts of Velero the
	// undoable uninstall is measured at, side by side, the first the one
	// its figures are quoted for (BENCH_VELERO_WORKERS; the harness's
	// VELERO_ITEM_BLOCK_WORKERS, 8, by default).
	VeleroWorkers []int
	// Exact is how many objects the namespace of the Exact LIST's cost holds.
	Exact int
	// OutageOperands are uninstalled with every request refused for OutageDown.
	OutageOperands int
	OutageDown     time.Duration
}

// Full is `make bench`: the sizes the figures are quoted for.
var Full = Scale{Name: "full", Operands: []int{1000, 10000, 30000}, ThroughputRuns: 4, ResumeOperands: 1000,
	Fleets: []int{500, 2000, 10000}, Unrelated: 100000, IdleManaged: 2000, IdleWindow: 5 * time.Minute, SelfRelease: 1000,
	BurstCSVs: 100, BurstOperands: 200, Startup: []int{1000, 10000}, SideBySide: 1000, Faults: 10000,
	OutageOperands: 1000, OutageDown: 2 * time.Minute, Extension: 10000, Exact: 10000, Backup: 10000, Undoable: 1000}

// Small runs in `make test`, so that the harness cannot rot.
var Small = Scale{Name: "small", Operands: []int{1000}, ThroughputRuns: 2, ResumeOperands: 1000,
	Fleets: []int{500}, Unrelated: 5000, IdleManaged: 100, IdleWindow: 20 * time.Second, SelfRelease: 100,
	BurstCSVs: 10, BurstOperands: 20, Startup: []int{100}, SideBySide: 20, Faults: 1000,
	OutageOperands: 100, OutageDown: 15 * time.Second, Extension: 1000, Exact: 1000, Backup: 300, Undoable: 30}

// ScaleFromEnv is Full when BENCH_SCALE=full, else Small. BENCH_OPERANDS
// and BENCH_STARTUP (comma-separated) override the throughput and the
// first-start sizes, BENCH_UNDOABLE the undoable uninstall's, to explore one,
// and BENCH_VELERO_WORKERS Velero's item-block workers for it (e.g. 8,1);
// BENCH_UNDOABLE_GATE_ONLY measures only the gated uninstall at each.
func ScaleFromEnv() (Scale, error) {
	s := Small
	if os.Getenv("BENCH_SCALE") == "full" {
		s = Full
	}
	if v := os.Getenv("BENCH_OPERANDS"); v != "" {
		s.Operands = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return s, fmt.Errorf("BENCH_OPERANDS=%q: %w", v, err)
			}
			s.Operands = append(s.Operands, n)
		}
	}
	if v := os.Getenv("BENCH_UNDOABLE"); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return s, fmt.Errorf("BENCH_UNDOABLE=%q: %w", v, err)
		}
		s.Undoable = n
	}
	if v := os.Getenv("BENCH_VELERO_WORKERS"); v != "" {
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return s, fmt.Errorf("BENCH_VELERO_WORKERS=%q: want counts of workers, 1 or more, comma-separated", v)
			}
			s.VeleroWorkers = append(s.VeleroWorkers, n)
		}
	}
	if v := os.Getenv("BENCH_STARTUP"); v != "" {
		s.Startup = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return s, fmt.Errorf("BENCH_STARTUP=%q: %w", v, err)
			}
			s.Startup = append(s.Startup, n)
		}
	}
	return s, nil
}

// only reports whether BENCH_ONLY is unset or names part.
func only(part string) bool {
	v := os.Getenv("BENCH_ONLY")
	return v == "" || v == part
}

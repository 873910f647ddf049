package bench

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestBench runs every benchmark at the scale BENCH_SCALE names (small by
// default) and prints the figures; with BENCH_REPORT_DIR set it writes
// benchmarks.md, benchmarks.json and benchmarks.svg there. It checks what
// the benchmarks measure (every uninstall completes, csv-cleaner writes
// nothing while idle, nothing keeps a finalizer of csv-cleaner's once it
// has released everything on its own uninstall), never a timing.
func TestBench(t *testing.T) {
	scale, err := ScaleFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Minute)
	defer cancel()
	e, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Stop(); err != nil {
			t.Error(err)
		}
	}()
	report := Report{Scale: scale.Name, QPS: defaultQPS(), Date: time.Now().UTC()}

	for _, n := range scale.Operands {
		if !only("throughput") {
			break
		}
		tp, err := e.MeasureThroughput(ctx, n)
		if err != nil {
			t.Fatalf("throughput, %d operands: %v", n, err)
		}
		t.Logf("%d operands: uninstall %s, floor %s, ratio %.2f, peak in flight %.0f, peak RSS %.1f MiB", n, tp.Uninstall, tp.Floor, tp.Ratio(), tp.PeakInflight, tp.PeakRSSMiB)
		report.Throughput = append(report.Throughput, tp)
	}

	if only("resume") {
		if report.Resume, err = e.MeasureResume(ctx, scale.ResumeOperands); err != nil {
			t.Fatalf("resume: %v", err)
		}
		t.Logf("resume: first delete %s, complete %s", report.Resume.FirstDelete, report.Resume.Complete)
	}

	if only("self-release") {
		if report.SelfRelease, err = e.MeasureSelfRelease(ctx, scale.SelfRelease); err != nil {
			t.Fatalf("self release: %v", err)
		}
		t.Logf("self release: %d objects in %s after SIGTERM (%.0f a second)", report.SelfRelease.Objects, report.SelfRelease.Exit, report.SelfRelease.PerSecond())
	}

	f := &fleet{}
	if only("memory") || only("idle") {
		if err := e.Unrelated(ctx, scale.Unrelated); err != nil {
			t.Fatalf("creating unrelated custom resources: %v", err)
		}
	}
	for _, n := range scale.Fleets {
		if !only("memory") {
			break
		}
		m, err := e.MeasureMemory(ctx, f, n)
		if err != nil {
			t.Fatalf("memory, %d CSVs: %v", n, err)
		}
		t.Logf("%d CSVs (%d managed): peak RSS %.1f MiB (Go heap in use then: %.1f MiB)", n, m.Managed, m.PeakRSSMiB, m.HeapInuseMiB)
		report.Memory = append(report.Memory, m)
	}

	if only("idle") {
		if report.Idle, err = e.MeasureIdle(ctx, f, scale.IdleManaged, scale.IdleWindow); err != nil {
			t.Fatalf("idle: %v", err)
		}
		if report.Idle.Writes != 0 {
			t.Errorf("csv-cleaner wrote %.0f times in %s while nothing changed, want none", report.Idle.Writes, report.Idle.Window)
		}
	}

	table := report.Table()
	t.Log("\n" + table)
	if dir := os.Getenv("BENCH_REPORT_DIR"); dir != "" && os.Getenv("BENCH_ONLY") == "" {
		if err := report.Write(dir); err != nil {
			t.Fatal(err)
		}
	}
}

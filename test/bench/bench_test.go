package bench

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// TestBench runs every benchmark at the scale BENCH_SCALE names (small by
// default) and prints the figures; with BENCH_REPORT_DIR set it writes
// benchmarks.md, benchmarks.json and benchmarks.svg there, or, for a run of
// one part (BENCH_ONLY), merges that part's figures into benchmarks.json
// (Report.Merge). It checks what
// the benchmarks measure (every uninstall completes, csv-cleaner writes
// nothing while idle, nothing keeps a finalizer of csv-cleaner's once it
// has released everything on its own uninstall), never a timing.
func TestBench(t *testing.T) {
	scale, err := ScaleFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	// The harness's own controller-runtime pieces (envtest installing
	// Velero's CRDs) log nothing: csv-cleaner's logs are in its log files.
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), benchTime(t))
	defer cancel()
	e, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if stopped {
			return
		}
		if err := e.Stop(); err != nil {
			t.Error(err)
		}
	}()
	report := Report{Scale: scale.Name, QPS: defaultQPS(), Date: time.Now().UTC()}

	for _, n := range scale.Operands {
		if !only("throughput") {
			break
		}
		tp, err := e.MeasureThroughput(ctx, n, scale.ThroughputRuns)
		if err != nil {
			t.Fatalf("throughput, %d operands: %v", n, err)
		}
		t.Logf("%d operands, median of %d runs: uninstall %s, per-object floor %s, ratio %.2f, kube-apiserver CPU ratio %.2f, DeleteCollection %s, peak in flight %.0f, peak RSS %.1f MiB", n, len(tp.Runs), tp.Uninstall, tp.Floor, tp.Ratio(), tp.CPURatio(), tp.Collection, tp.PeakInflight, tp.PeakRSSMiB)
		for i, r := range tp.Runs {
			t.Logf("%d operands, run %d (floor first: %t): uninstall %s, floor %s, ratio %.2f; kube-apiserver CPU %.2f s, floor %.2f s; csv-cleaner's CPU %.2f s, the floor client's %.2f s; etcd %.2f s, floor %.2f s", n, i+1, r.FloorFirst, r.Uninstall, r.Floor, r.Uninstall.Seconds()/r.Floor.Seconds(), r.UninstallCPU.APIServer, r.FloorCPU.APIServer, r.UninstallCPU.Cleaner, r.FloorCPU.Harness, r.UninstallCPU.Etcd, r.FloorCPU.Etcd)
		}
		t.Logf("%d operands: requests by verb and resource: uninstall %v, per-object floor %v", n, tp.Requests, tp.FloorRequests)
		report.Throughput = append(report.Throughput, tp)
	}

	if scale.Faults > 0 && only("faults") {
		i := slices.IndexFunc(report.Throughput, func(t Throughput) bool { return t.Operands == scale.Faults })
		var unfaulted Throughput
		if i >= 0 {
			unfaulted = report.Throughput[i]
		} else if unfaulted, err = e.MeasureThroughput(ctx, scale.Faults, scale.ThroughputRuns); err != nil {
			t.Fatalf("throughput, %d operands: %v", scale.Faults, err)
		}
		f, err := e.MeasureFaults(ctx, scale.Faults, unfaulted)
		if err != nil {
			t.Fatalf("faults, %d operands: %v", scale.Faults, err)
		}
		t.Logf("%d operands behind the fault proxy: uninstall %s, without faults %s behind the proxy (ratio %.2f) and %s without it (ratio %.2f); injected %v; %.0f requests retried in place, %.0f attempts failed",
			f.Operands, f.Uninstall, f.Proxied, f.Ratio(), f.Unfaulted, f.RatioUnproxied(), f.Injected, f.Retries, f.FailedAttempts)
		report.Faults = &f
	}

	if scale.Exact > 0 && only("exact") {
		x, err := e.MeasureExactList(ctx, scale.Exact)
		if err != nil {
			t.Fatalf("Exact LIST, %d objects: %v", scale.Exact, err)
		}
		t.Logf("LIST of %d objects in one namespace, median of %d: consistent %s, Exact at a revision %d writes old %s; kube-apiserver CPU per list %.1f / %.1f ms, etcd %.1f / %.1f ms",
			x.Objects, x.Reps, x.Consistent, x.Writes, x.Exact, x.ConsistentCPU.APIServer*1000, x.ExactCPU.APIServer*1000, x.ConsistentCPU.Etcd*1000, x.ExactCPU.Etcd*1000)
		t.Logf("Search of a deletion's revision after the fact, cluster at revision %s: %d Exact LISTs, %s (median of %d); kube-apiserver CPU %.1f ms, etcd %.1f ms",
			x.Search.ClusterRevision, x.Search.Lists, x.Search.Took, x.Reps, x.Search.CPU.APIServer*1000, x.Search.CPU.Etcd*1000)
		report.Exact = &x
	}
	if scale.Extension > 0 && only("extension") {
		x, err := e.MeasureExtension(ctx, scale.Extension)
		if err != nil {
			t.Fatalf("ClusterExtension, %d resources: %v", scale.Extension, err)
		}
		t.Logf("ClusterExtension with %d resources: uninstall %s, per-object floor %s, ratio %.2f, peak in flight %.0f", x.Operands, x.Uninstall, x.Floor, x.Ratio(), x.PeakInflight)
		report.Extension = &x
	}

	if scale.Backup > 0 && only("backup") {
		b, err := e.MeasureBackup(ctx, scale.Backup)
		if err != nil {
			t.Fatalf("backup gate, %d resources: %v", scale.Backup, err)
		}
		t.Logf("Backup gate with %d resources: uninstall %s, per-object floor %s, its own Backup %s (%d items): ratio %.2f, %s added; a Backup of the same by hand %s (ratio %.2f)",
			b.Operands, b.Uninstall, b.Floor, b.Gate, b.Items, b.Ratio(), b.Added().Round(time.Millisecond), b.Velero, b.ReferenceRatio())
		report.Backup = &b
	}

	veleroWorkers := scale.VeleroWorkers
	if len(veleroWorkers) == 0 {
		veleroWorkers = []int{0} // the harness's count
	}
	for i, workers := range veleroWorkers {
		if scale.Undoable == 0 || !only("undo") {
			break
		}
		gateOnly := i > 0 || os.Getenv("BENCH_UNDOABLE_GATE_ONLY") != ""
		u, err := e.MeasureUndoable(ctx, scale.Undoable, workers, gateOnly)
		if err != nil {
			t.Fatalf("undoable uninstall, %d resources with a Secret, a ConfigMap and a claim each, Velero at %d item-block workers: %v", scale.Undoable, workers, err)
		}
		if gateOnly {
			t.Logf("Side by side, the same uninstall of %d resources with Velero at %d item-block workers: uninstall %s, per-object floor %s, its own Backup %s (%d items, %d volumes): ratio %.2f",
				u.Operands, u.Workers, u.Uninstall, u.Floor, u.Gate, u.Items, u.Volumes, u.Ratio())
			report.UndoableAt = append(report.UndoableAt, u)
			continue
		}
		t.Logf("Undoable uninstall of %d resources, each with a Secret, a ConfigMap and a claim, Velero at %d item-block workers: uninstall %s, per-object floor %s, its own Backup %s (%d items, %d volumes): ratio %.2f; a Backup of the same by hand %s before it, %s after it; undo %s (%d objects restored, %d linked to their owners again), Velero's own Restore %s: ratio %.2f; the second uninstall of the restored install %s (its Backup %s): ratio to the first %.2f",
			u.Operands, u.Workers, u.Uninstall, u.Floor, u.Gate, u.Items, u.Volumes, u.Ratio(), u.Velero, u.VeleroAfter, u.Undo, u.Restored, u.Linked, u.Restore, u.UndoRatio(), u.Second, u.SecondGate, u.SecondRatio())
		report.Undoable = &u
		report.UndoableAt = append(report.UndoableAt, u)
	}

	if scale.OutageOperands > 0 && only("outage") {
		o, err := e.MeasureOutage(ctx, scale.OutageOperands, scale.OutageDown)
		if err != nil {
			t.Fatalf("outage: %v", err)
		}
		t.Logf("%d operands, every request refused for %s from the deletion: complete %s after the recovery; %d requests refused, %.0f attempts failed",
			o.Operands, o.Down, o.Resumed, o.Refused, o.FailedAttempts)
		report.Outage = &o
	}

	for _, tool := range []Tool{KubectlOperator, OperatorSDKCleanup} {
		if scale.SideBySide == 0 || !only("side-by-side") {
			break
		}
		k, err := e.MeasureSideBySide(ctx, tool, scale.SideBySide)
		if err != nil {
			t.Fatalf("%s, %d operands: %v", tool.Bin, scale.SideBySide, err)
		}
		t.Logf("%s on %d operands: %s (%d objects reported deleted), per-object floor %s, ratio %.1f", k.Command, k.Operands, k.Took, k.Deleted, k.Floor, k.Ratio())
		report.SideBySide = append(report.SideBySide, k)
	}

	if only("burst") {
		if report.Burst, err = e.MeasureBurst(ctx, scale.BurstCSVs, scale.BurstOperands); err != nil {
			t.Fatalf("burst: %v", err)
		}
		b := report.Burst
		t.Logf("burst of %d uninstalls: record Deleting p50 %s p99 %s max %s (%d never seen Deleting); complete p50 %s p99 %s max %s; total %s, per-object floor %s, ratio %.2f",
			b.CSVs, quantile(b.RecordVisible, 0.5), quantile(b.RecordVisible, 0.99), quantile(b.RecordVisible, 1), b.NeverDeleting,
			quantile(b.Complete, 0.5), quantile(b.Complete, 0.99), quantile(b.Complete, 1), b.Total, b.Floor, b.Ratio())
		if b.NeverDeleting > 0 {
			t.Errorf("%d of %d records were never seen at phase Deleting", b.NeverDeleting, b.CSVs)
		}
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

	have := 0
	if len(scale.Startup) > 0 && only("startup") {
		// The first start runs on a control plane of its own, which holds
		// nothing but its fleet: the workload the figures are quoted for.
		if err := e.Stop(); err != nil {
			t.Fatal(err)
		}
		stopped = true
		if e, err = Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := e.Stop(); err != nil {
				t.Error(err)
			}
		}()
	}
	for _, n := range scale.Startup {
		if !only("startup") {
			break
		}
		st, err := e.MeasureStartup(ctx, have, n, startupArgs()...)
		if err != nil {
			t.Fatalf("startup, %d CSVs: %v", n, err)
		}
		have = n
		t.Logf("first start on %d CSVs: %s (%s a CSV), %.0f requests, %.0f conflicts, peak in flight %.0f, peak RSS %.1f MiB, probe p99 %s idle, %s during; CPU s: kube-apiserver %.1f, etcd %.1f, csv-cleaner %.1f",
			n, st.Took, st.PerCSV(), st.Requests, st.Conflicts, st.PeakInflight, st.PeakRSSMiB, st.ProbeIdleP99, st.ProbeP99, st.CPU.APIServer, st.CPU.Etcd, st.CPU.Cleaner)
		paceMid, paceTop := st.PaceLimit()
		t.Logf("first start on %d CSVs: requests by verb %v", n, st.RequestsByVerb)
		t.Logf("first start on %d CSVs: pace limit median %.0f, highest %.0f in flight; the probe's p99 over each 10 s: %v; the limit each second: %v", n, paceMid, paceTop, st.ProbeSpans, st.PaceLimits)
		t.Logf("first start on %d CSVs: %.2f times the write floor, probe p99 %.2f times idle; the write floor (%d PATCHes, unpaced, %d at a time): %s as csv-cleaner's ServiceAccount (kube-apiserver %.2f ms a PATCH, probe p99 %s), %s as system:masters (%.2f ms a PATCH, probe p99 %s)",
			n, st.RatioToWriteFloor(), st.ProbeRatio(), st.Floor.Patches, floorWorkers, st.Floor.Took, st.Floor.APIServerMsPerPatch(), st.Floor.ProbeP99,
			st.FloorMasters.Took, st.FloorMasters.APIServerMsPerPatch(), st.FloorMasters.ProbeP99)
		report.Startup = append(report.Startup, st)
	}

	table := report.Table()
	t.Log("\n" + table)
	if dir, only := os.Getenv("BENCH_REPORT_DIR"), os.Getenv("BENCH_ONLY"); dir != "" {
		write := report.Write
		if only != "" {
			write = func(dir string) error { return report.Merge(dir, only) }
		}
		if err := write(dir); err != nil {
			t.Fatal(err)
		}
	}
}

// startupArgs are csv-cleaner's extra arguments in the startup benchmark
// (BENCH_STARTUP_ARGS, space-separated), to measure another rate bound.
func startupArgs() []string { return strings.Fields(os.Getenv("BENCH_STARTUP_ARGS")) }

// benchTime is how long the measurements may take: until go test's
// -timeout, less 5 minutes to stop the control plane and write the report.
func benchTime(t *testing.T) time.Duration {
	deadline, ok := t.Deadline()
	if !ok {
		return 24 * time.Hour
	}
	return max(time.Until(deadline)-5*time.Minute, time.Minute)
}

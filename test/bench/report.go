package bench

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/owninstall"
)

// Report is the figures of one run.
type Report struct {
	Scale       string
	Date        time.Time
	QPS         [2]float64
	Throughput  []Throughput
	Resume      Resume
	Memory      []Memory
	Idle        Idle
	SelfRelease SelfRelease
	Burst       Burst
	Startup     []Startup
	// SideBySide is what users run today, each tool side by side with the per-object floor.
	SideBySide []SideBySide
	// Faults is the throughput run behind the fault proxy.
	Faults *Faults `json:",omitempty"`
	// Outage is an uninstall through an outage of the API server.
	Outage *Outage `json:",omitempty"`
	// Extension is the throughput run of an OLM v1 ClusterExtension's uninstall.
	Extension *Throughput `json:",omitempty"`
	// Exact is the cost of a LIST at an exact earlier revision (the deletion's second).
	Exact *ExactList `json:",omitempty"`
	// Backup is the backup gate's cost, with real Velero.
	Backup *Backup `json:",omitempty"`
	// Undoable is the gate's cost with dependents and volumes, and the undo's, with real Velero and the CSI stack.
	Undoable *Undoable `json:",omitempty"`
	// UndoableAt is the undoable uninstall at each of Velero's worker
	// counts measured, side by side (Undoable is the first).
	UndoableAt []Undoable `json:",omitempty"`
}

func defaultQPS() [2]float64 { return [2]float64{cleanup.DefaultQPS, cleanup.DefaultBurst} }

// size names a count in a key: 1000 is 1k, 500 is 500.
func size(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// cpuKey starts the keys of the CPU time per operand, in milliseconds.
const cpuKey = "cpu_ms_per_operand_"

// Figures are the report's keys and values, in a stable order.
func (r Report) Figures() [][2]any {
	var out [][2]any
	for _, t := range r.Throughput {
		out = append(out,
			[2]any{"uninstall_ratio_to_floor_" + size(t.Operands), round(t.Ratio(), 2)},
			[2]any{"uninstall_seconds_" + size(t.Operands), round(t.Uninstall.Seconds(), 2)},
			[2]any{"floor_seconds_" + size(t.Operands), round(t.Floor.Seconds(), 2)},
			[2]any{"apiserver_cpu_ratio_to_floor_" + size(t.Operands), round(t.CPURatio(), 2)},
			[2]any{"collection_ratio_" + size(t.Operands), round(t.CollectionRatio(), 2)},
			[2]any{"collection_seconds_" + size(t.Operands), round(t.Collection.Seconds(), 2)},
			[2]any{"peak_inflight_requests_" + size(t.Operands), t.PeakInflight},
			[2]any{"uninstall_rss_mib_" + size(t.Operands), round(t.PeakRSSMiB, 1)},
			[2]any{cpuKey + "apiserver_floor_" + size(t.Operands), round(t.perOperand(t.FloorCPU.APIServer), 3)},
			[2]any{cpuKey + "apiserver_uninstall_" + size(t.Operands), round(t.perOperand(t.UninstallCPU.APIServer), 3)},
			[2]any{cpuKey + "etcd_floor_" + size(t.Operands), round(t.perOperand(t.FloorCPU.Etcd), 3)},
			[2]any{cpuKey + "etcd_uninstall_" + size(t.Operands), round(t.perOperand(t.UninstallCPU.Etcd), 3)},
			[2]any{cpuKey + "cleaner_uninstall_" + size(t.Operands), round(t.perOperand(t.UninstallCPU.Cleaner), 3)},
		)
	}
	if t := r.Extension; t != nil {
		out = append(out,
			[2]any{"extension_ratio_to_floor_" + size(t.Operands), round(t.Ratio(), 2)},
			[2]any{"extension_uninstall_seconds_" + size(t.Operands), round(t.Uninstall.Seconds(), 2)},
			[2]any{"extension_floor_seconds_" + size(t.Operands), round(t.Floor.Seconds(), 2)},
			[2]any{"extension_peak_inflight_requests_" + size(t.Operands), t.PeakInflight},
		)
	}
	if b := r.Backup; b != nil {
		out = append(out,
			[2]any{"backup_gate_ratio_" + size(b.Operands), round(b.Ratio(), 2)},
			[2]any{"backup_gate_uninstall_seconds_" + size(b.Operands), round(b.Uninstall.Seconds(), 2)},
			[2]any{"backup_gate_floor_seconds_" + size(b.Operands), round(b.Floor.Seconds(), 2)},
			[2]any{"backup_gate_backup_seconds_" + size(b.Operands), round(b.Gate.Seconds(), 2)},
			[2]any{"backup_gate_added_seconds_" + size(b.Operands), round(b.Added().Seconds(), 2)},
			[2]any{"backup_gate_reference_ratio_" + size(b.Operands), round(b.ReferenceRatio(), 2)},
			[2]any{"velero_backup_seconds_" + size(b.Operands), round(b.Velero.Seconds(), 2)},
			[2]any{"velero_backup_items_" + size(b.Operands), b.Items},
		)
	}
	if u := r.Undoable; u != nil {
		out = append(out,
			[2]any{"undoable_gate_ratio_" + size(u.Operands), round(u.Ratio(), 2)},
			[2]any{"undoable_uninstall_seconds_" + size(u.Operands), round(u.Uninstall.Seconds(), 2)},
			[2]any{"undoable_floor_seconds_" + size(u.Operands), round(u.Floor.Seconds(), 2)},
			[2]any{"undoable_backup_seconds_" + size(u.Operands), round(u.Gate.Seconds(), 2)},
			[2]any{"undoable_velero_backup_seconds_" + size(u.Operands), round(u.Velero.Seconds(), 2)},
			[2]any{"undoable_velero_backup_after_seconds_" + size(u.Operands), round(u.VeleroAfter.Seconds(), 2)},
			[2]any{"undoable_backup_items_" + size(u.Operands), u.Items},
			[2]any{"undoable_backup_volumes_" + size(u.Operands), u.Volumes},
			[2]any{"undo_ratio_to_velero_restore_" + size(u.Operands), round(u.UndoRatio(), 2)},
			[2]any{"undo_seconds_" + size(u.Operands), round(u.Undo.Seconds(), 2)},
			[2]any{"velero_restore_seconds_" + size(u.Operands), round(u.Restore.Seconds(), 2)},
			[2]any{"undo_restored_" + size(u.Operands), u.Restored},
			[2]any{"undo_linked_" + size(u.Operands), u.Linked},
			[2]any{"second_uninstall_ratio_" + size(u.Operands), round(u.SecondRatio(), 2)},
			[2]any{"second_uninstall_seconds_" + size(u.Operands), round(u.Second.Seconds(), 2)},
			[2]any{"second_uninstall_backup_seconds_" + size(u.Operands), round(u.SecondGate.Seconds(), 2)},
			[2]any{"undoable_velero_workers_" + size(u.Operands), u.Workers},
		)
	}
	for _, u := range r.UndoableAt {
		// Each worker count measured side by side: the uninstall, its
		// Backup and the floor (the first count measures the rest too).
		at := size(u.Operands) + "_w" + strconv.Itoa(u.Workers)
		out = append(out,
			[2]any{"undoable_uninstall_seconds_" + at, round(u.Uninstall.Seconds(), 2)},
			[2]any{"undoable_backup_seconds_" + at, round(u.Gate.Seconds(), 2)},
			[2]any{"undoable_floor_seconds_" + at, round(u.Floor.Seconds(), 2)},
			[2]any{"undoable_gate_ratio_" + at, round(u.Ratio(), 2)},
		)
	}
	if x := r.Exact; x != nil {
		out = append(out,
			[2]any{"exact_list_ms_" + size(x.Objects), round(float64(x.Exact.Microseconds())/1000, 1)},
			[2]any{"consistent_list_ms_" + size(x.Objects), round(float64(x.Consistent.Microseconds())/1000, 1)},
			[2]any{"exact_list_apiserver_cpu_ms_" + size(x.Objects), round(x.ExactCPU.APIServer*1000, 1)},
			[2]any{"consistent_list_apiserver_cpu_ms_" + size(x.Objects), round(x.ConsistentCPU.APIServer*1000, 1)},
			[2]any{"exact_list_etcd_cpu_ms_" + size(x.Objects), round(x.ExactCPU.Etcd*1000, 1)},
			[2]any{"consistent_list_etcd_cpu_ms_" + size(x.Objects), round(x.ConsistentCPU.Etcd*1000, 1)},
			[2]any{"revision_search_ms", round(float64(x.Search.Took.Microseconds())/1000, 1)},
			[2]any{"revision_search_lists", x.Search.Lists},
			[2]any{"revision_search_cluster_revision", x.Search.ClusterRevision},
			[2]any{"revision_search_apiserver_cpu_ms", round(x.Search.CPU.APIServer*1000, 1)},
			[2]any{"revision_search_etcd_cpu_ms", round(x.Search.CPU.Etcd*1000, 1)},
		)
	}
	if f := r.Faults; f != nil {
		out = append(out,
			[2]any{"faults_ratio_to_proxied_" + size(f.Operands), round(f.Ratio(), 2)},
			[2]any{"faults_ratio_to_unfaulted_" + size(f.Operands), round(f.RatioUnproxied(), 2)},
			[2]any{"faults_uninstall_seconds_" + size(f.Operands), round(f.Uninstall.Seconds(), 2)},
			[2]any{"faults_proxied_seconds_" + size(f.Operands), round(f.Proxied.Seconds(), 2)},
			[2]any{"faults_proxy_cost_" + size(f.Operands), round(f.ProxyCost(), 2)},
			[2]any{"faults_injected_" + size(f.Operands), f.injectedTotal()},
			[2]any{"faults_requests_retried_" + size(f.Operands), f.Retries},
			[2]any{"faults_failed_attempts_" + size(f.Operands), f.FailedAttempts},
		)
	}
	if o := r.Outage; o != nil {
		out = append(out,
			[2]any{"outage_resumed_seconds_" + size(o.Operands), round(o.Resumed.Seconds(), 2)},
			[2]any{"outage_down_seconds", round(o.Down.Seconds(), 0)},
			[2]any{"outage_refused_requests", o.Refused},
			[2]any{"outage_failed_attempts", o.FailedAttempts},
		)
	}
	for _, k := range r.SideBySide {
		out = append(out,
			[2]any{k.Tool + "_ratio_" + size(k.Operands), round(k.Ratio(), 1)},
			[2]any{k.Tool + "_seconds_" + size(k.Operands), round(k.Took.Seconds(), 1)},
			[2]any{k.Tool + "_floor_seconds_" + size(k.Operands), round(k.Floor.Seconds(), 2)},
		)
	}
	if b := r.Burst; b.CSVs > 0 {
		out = append(out,
			[2]any{"burst_record_visible_p50_seconds", round(quantile(b.RecordVisible, 0.5).Seconds(), 2)},
			[2]any{"burst_record_visible_p99_seconds", round(quantile(b.RecordVisible, 0.99).Seconds(), 2)},
			[2]any{"burst_record_visible_max_seconds", round(quantile(b.RecordVisible, 1).Seconds(), 2)},
			[2]any{"burst_records_never_deleting", b.NeverDeleting},
			[2]any{"burst_complete_p50_seconds", round(quantile(b.Complete, 0.5).Seconds(), 2)},
			[2]any{"burst_complete_p99_seconds", round(quantile(b.Complete, 0.99).Seconds(), 2)},
			[2]any{"burst_complete_max_seconds", round(quantile(b.Complete, 1).Seconds(), 2)},
			[2]any{"burst_seconds", round(b.Total.Seconds(), 2)},
			[2]any{"burst_floor_seconds", round(b.Floor.Seconds(), 2)},
			[2]any{"burst_ratio_to_floor", round(b.Ratio(), 2)},
		)
	}
	for _, st := range r.Startup {
		n := fmt.Sprint(st.CSVs)
		out = append(out,
			[2]any{"startup_seconds_" + n, round(st.Took.Seconds(), 1)},
			[2]any{"startup_ms_per_csv_" + n, round(float64(st.PerCSV().Microseconds())/1000, 2)},
			[2]any{"startup_requests_" + n, st.Requests},
			[2]any{"startup_requests_per_second_" + n, round(st.Requests/st.Took.Seconds(), 0)},
			[2]any{"startup_conflicts_" + n, st.Conflicts},
			[2]any{"startup_peak_inflight_" + n, st.PeakInflight},
			[2]any{"startup_rss_mib_" + n, round(st.PeakRSSMiB, 1)},
			[2]any{"startup_probe_p99_ms_idle_" + n, round(float64(st.ProbeIdleP99.Microseconds())/1000, 1)},
			[2]any{"startup_probe_p99_ms_" + n, round(float64(st.ProbeP99.Microseconds())/1000, 1)},
			[2]any{"startup_cpu_seconds_apiserver_" + n, round(st.CPU.APIServer, 1)},
			[2]any{"startup_cpu_seconds_etcd_" + n, round(st.CPU.Etcd, 1)},
			[2]any{"startup_cpu_seconds_cleaner_" + n, round(st.CPU.Cleaner, 1)},
			[2]any{"startup_ratio_to_write_floor_" + n, round(st.RatioToWriteFloor(), 2)},
			[2]any{"startup_probe_ratio_" + n, round(st.ProbeRatio(), 2)},
			[2]any{"startup_probe_p99_ms_span_median_" + n, round(float64(st.ProbeSpanMedian().Microseconds())/1000, 1)},
			[2]any{"startup_pace_limit_median_" + n, round(paceMedian(st), 0)},
			[2]any{"startup_pace_limit_max_" + n, round(paceMax(st), 0)},
			[2]any{"startup_write_floor_seconds_" + n, round(st.Floor.Took.Seconds(), 1)},
			[2]any{"startup_write_floor_patches_" + n, st.Floor.Patches},
			[2]any{"startup_write_floor_apiserver_ms_per_patch_" + n, round(st.Floor.APIServerMsPerPatch(), 2)},
			[2]any{"startup_write_floor_probe_p99_ms_" + n, round(float64(st.Floor.ProbeP99.Microseconds())/1000, 1)},
			[2]any{"startup_write_floor_masters_seconds_" + n, round(st.FloorMasters.Took.Seconds(), 1)},
			[2]any{"startup_write_floor_masters_apiserver_ms_per_patch_" + n, round(st.FloorMasters.APIServerMsPerPatch(), 2)},
			[2]any{"startup_write_floor_masters_probe_p99_ms_" + n, round(float64(st.FloorMasters.ProbeP99.Microseconds())/1000, 1)},
		)
	}
	if len(r.Startup) >= 2 {
		a, b := r.Startup[0], r.Startup[len(r.Startup)-1]
		out = append(out, [2]any{"startup_cost_per_csv_ratio", round(b.PerCSV().Seconds()/a.PerCSV().Seconds(), 2)})
	}
	if r.Resume.Operands > 0 {
		out = append(out,
			[2]any{"resume_first_delete_seconds", round(r.Resume.FirstDelete.Seconds(), 2)},
			[2]any{"resume_complete_seconds", round(r.Resume.Complete.Seconds(), 2)},
		)
	}
	if s := r.SelfRelease; s.CSVs > 0 {
		out = append(out,
			[2]any{"self_release_seconds_" + fmt.Sprint(s.CSVs), round(s.Exit.Seconds(), 2)},
			[2]any{"self_release_objects_per_second", round(s.PerSecond(), 0)},
			[2]any{"self_release_csvs_within_timeout", s.CSVsWithin(owninstall.DefaultReleaseTimeout)},
		)
	}
	for _, m := range r.Memory {
		out = append(out, [2]any{"rss_mib_" + fmt.Sprint(m.CSVs), round(m.PeakRSSMiB, 1)},
			[2]any{"heap_inuse_mib_" + fmt.Sprint(m.CSVs), round(m.HeapInuseMiB, 1)})
	}
	if r.Idle.Window > 0 {
		out = append(out, r.Idle.figures()...)
	}
	return out
}

// figures are the idle figures, the writes keyed by the window.
func (i Idle) figures() [][2]any {
	window := i.Window.String()
	if i.Window%time.Minute == 0 {
		window = fmt.Sprintf("%dmin", int(i.Window.Minutes()))
	}
	return [][2]any{
		{"idle_writes_" + window, i.Writes},
		{"idle_list_per_min", round(i.ListsPerMinute, 2)},
		{"idle_watch_per_min", round(i.WatchesPerMinute, 2)},
	}
}

func round(v float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(v*p+0.5)) / p
}

// goals says what each figure should be, where the issue sets a goal.
func goal(key string) string {
	switch {
	case key == "uninstall_ratio_to_floor_1k":
		return "≤ 1.15"
	case key == "apiserver_cpu_ratio_to_floor_10k":
		return "≤ 1.03"
	case strings.HasPrefix(key, "uninstall_ratio_to_floor_"), strings.HasPrefix(key, "extension_ratio_to_floor_"), strings.HasPrefix(key, "backup_gate_ratio_"),
		strings.HasPrefix(key, "undoable_gate_ratio_"), strings.HasPrefix(key, "second_uninstall_ratio_"):
		return "≤ 1.05"
	case strings.HasPrefix(key, "undo_ratio_to_velero_restore_"):
		return "≤ 0.80"
	case key == "undoable_uninstall_seconds_1k":
		return "≤ 180"
	case strings.HasPrefix(key, "faults_ratio_to_proxied_"):
		return "≤ 1.5"
	case strings.HasPrefix(key, "outage_resumed_seconds_"):
		return "≤ 10 + 2.3"
	case strings.HasPrefix(key, "burst_record_visible_p99"):
		return "≤ 1"
	case key == "burst_records_never_deleting", strings.HasPrefix(key, "startup_conflicts_"):
		return "0"
	case key == "burst_ratio_to_floor":
		return "≤ 1.2"
	case strings.HasPrefix(key, "startup_ratio_to_write_floor_"):
		return "≤ 2"
	case strings.HasPrefix(key, "startup_probe_ratio_"):
		return "≤ 3"
	case strings.HasPrefix(key, "startup_rss_mib_"):
		return "≤ 64"
	case strings.HasPrefix(key, "startup_probe_p99_ms_") && !strings.Contains(key, "idle"):
		return "≤ 3 × idle"
	case strings.HasPrefix(key, "rss_mib_"):
		return "≤ 64, flat ±10 %"
	case strings.HasPrefix(key, "idle_writes_"):
		return "0"
	}
	return ""
}

// Table is the figures as a text table.
func (r Report) Table() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintf(tw, "FIGURE\tVALUE\tGOAL\n")
	for _, f := range r.Figures() {
		_, _ = fmt.Fprintf(tw, "%s\t%v\t%s\n", f[0], f[1], goal(f[0].(string)))
	}
	_ = tw.Flush()
	return b.String()
}

// Write writes benchmarks.json, benchmarks.md and benchmarks.svg into dir.
func (r Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	figures := map[string]any{}
	for _, f := range r.Figures() {
		figures[f[0].(string)] = f[1]
	}
	doc := map[string]any{
		"figures": figures,
		"run": r.runInfo(map[string]any{
			"client_qps": r.QPS[0], "client_burst": r.QPS[1], "delete_workers": cleanup.DefaultDeleteWorkers,
		}),
	}
	raw, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "benchmarks.json"), append(raw, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "benchmarks.svg"), []byte(r.SVG()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "benchmarks.md"), []byte(r.Markdown()), 0o644)
}

// runInfo is what names a run in benchmarks.json (scale, date, machine), with more.
func (r Report) runInfo(more map[string]any) map[string]any {
	info := map[string]any{"scale": r.Scale, "date": r.Date.Format(time.RFC3339), "cpus": runtime.NumCPU(), "go": runtime.Version()}
	maps.Copy(info, more)
	return info
}

func paceMedian(s Startup) float64 { m, _ := s.PaceLimit(); return m }
func paceMax(s Startup) float64    { _, h := s.PaceLimit(); return h }

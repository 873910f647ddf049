package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// Startup is csv-cleaner's first start on many managed CSVs that carry no
// finalizer yet, each with a ClusterRole and a binding to hold.
type Startup struct {
	CSVs int
	// Took runs from the process's start until every CSV carries the
	// finalizer and every ClusterRole and binding the RBAC hold.
	Took time.Duration
	// Requests and Conflicts are csv-cleaner's requests during the start, and
	// those answered 409; PeakInflight the most it had in flight at once.
	Requests, Conflicts, PeakInflight float64
	PeakRSSMiB                        float64
	// ProbeIdleP99 and ProbeP99 are a probe client's GET latency at p99,
	// idle before the start and during it.
	ProbeIdleP99, ProbeP99 time.Duration
	// CPU is what kube-apiserver, etcd and csv-cleaner used during the start.
	CPU CPU
	// Floor and FloorMasters are the write floor (WriteFloor) before the
	// start, as csv-cleaner's ServiceAccount and as a user in system:masters.
	Floor, FloorMasters WriteFloor
	// PaceLimits are csv_cleaner_write_pace_limit, read every second of the start.
	PaceLimits []float64
	// ProbeSpans are the probe's p99 over each 10 s of the start.
	ProbeSpans []time.Duration
	// RequestsByVerb are csv-cleaner's requests by the API server's verb.
	RequestsByVerb map[string]float64
}

// PaceLimit is the median and the highest of the pace limits read.
func (s Startup) PaceLimit() (median, highest float64) {
	if len(s.PaceLimits) == 0 {
		return 0, 0
	}
	sorted := slices.Sorted(slices.Values(s.PaceLimits))
	return sorted[len(sorted)/2], sorted[len(sorted)-1]
}

// RatioToWriteFloor is the start's time over the unpaced write floor of the same identity.
func (s Startup) RatioToWriteFloor() float64 {
	return s.Took.Seconds() / max(s.Floor.Took.Seconds(), 1e-9)
}

// ProbeSpanMedian is the median of the probe's p99 over each 10 s of the
// start: the latency most of the start gives other clients, without its
// few slowest moments.
func (s Startup) ProbeSpanMedian() time.Duration { return quantile(s.ProbeSpans, 0.5) }

// ProbeRatio is the probe's p99 during the start over its p99 idle.
func (s Startup) ProbeRatio() float64 {
	return s.ProbeP99.Seconds() / max(s.ProbeIdleP99.Seconds(), 1e-9)
}

// PerCSV is the start's time per CSV.
func (s Startup) PerCSV() time.Duration { return s.Took / time.Duration(max(s.CSVs, 1)) }

// startupFleet creates n managed CSVs labelled bench=<id> over csvNamespaces
// namespaces, each with a ClusterRole and a ClusterRoleBinding carrying its
// three owner labels, on top of the ones created before (have).
func (e *Env) startupFleet(ctx context.Context, id string, have, n int) error {
	ns, err := e.namespaces(ctx, "bench-"+id, csvNamespaces)
	if err != nil {
		return err
	}
	return parallel(ctx, n-have, func(ctx context.Context, i int) error {
		i += have
		in := fixtures.Install{Namespace: ns[i%len(ns)], CSVName: fmt.Sprintf("%s-%05d.v1.0.0", id, i), Targets: []string{ns[i%len(ns)]},
			CRDs: []fixtures.CRD{{Group: id + ".bench.example.com", Kind: "Widget", Plural: "widgets"}}, Labels: map[string]string{"bench": id}}
		if err := e.Client.Create(ctx, in.CSV()); err != nil {
			return fmt.Errorf("creating CSV %s: %w", in.Key(), err)
		}
		name := fmt.Sprintf("%s-%05d", id, i)
		role, binding := fixtures.OwnedClusterRole(name, in.Key()), fixtures.OwnedClusterRoleBinding(name, in.Key())
		role.Labels["bench"], binding.Labels["bench"] = id, id
		if err := e.Client.Create(ctx, role); err != nil {
			return err
		}
		return e.Client.Create(ctx, binding)
	})
}

// held follows, through watches, which objects carry a finalizer, with
// what a client patching them from a cache would know of each.
type held struct {
	mu   sync.Mutex
	objs map[heldKey]heldState
}

// heldKey names one object of the first start's fleet.
type heldKey struct {
	resource, namespace, name string
}

// heldObject is one object of the fleet as last seen.
type heldObject struct {
	heldKey
	resourceVersion string
	finalizers      []string
}

type heldState struct {
	held            bool
	resourceVersion string
	finalizers      []string
}

func (h *held) count() (all, held int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, st := range h.objs {
		all++
		if st.held {
			held++
		}
	}
	return all, held
}

// allCarry reports whether every object csv-cleaner does not hold carries finalizer.
func (h *held) allCarry(finalizer string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, st := range h.objs {
		if !st.held && !slices.Contains(st.finalizers, finalizer) {
			return false
		}
	}
	return true
}

// unheld are the objects that lack the finalizer, as last seen.
func (h *held) unheld() []heldObject {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []heldObject
	for k, st := range h.objs {
		if !st.held {
			out = append(out, heldObject{heldKey: k, resourceVersion: st.resourceVersion, finalizers: st.finalizers})
		}
	}
	return out
}

// watchHeld watches the resource's objects the label selector selects and
// notes whether each carries finalizer.
func (e *Env) watchHeld(ctx context.Context, h *held, gvr schema.GroupVersionResource, selector, finalizer string) error {
	w, err := e.Dynamic.Resource(gvr).Watch(ctx, metav1.ListOptions{LabelSelector: selector, SendInitialEvents: ptrTo(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		return fmt.Errorf("watching %s: %w", gvr.Resource, err)
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			o, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type == watch.Bookmark {
				continue
			}
			key := heldKey{resource: gvr.Resource, namespace: o.GetNamespace(), name: o.GetName()}
			h.mu.Lock()
			if ev.Type == watch.Deleted {
				delete(h.objs, key)
			} else {
				h.objs[key] = heldState{held: slices.Contains(o.GetFinalizers(), finalizer), resourceVersion: o.GetResourceVersion(), finalizers: o.GetFinalizers()}
			}
			h.mu.Unlock()
		}
	}()
	return nil
}

// probeIdle is how long the probe runs before the start to measure its idle p99.
const probeIdle = 30 * time.Second

// probe GETs a namespace every 100 ms as its own client and keeps the latencies.
type probe struct {
	mu        sync.Mutex
	latencies []time.Duration
	// at are when each of latencies was taken.
	at []time.Time
}

// p99Since is the p99 of each span of the latencies taken since start, which it keeps.
func (p *probe) p99Since(start time.Time, span time.Duration) []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []time.Duration
	var cur []time.Duration
	end := start.Add(span)
	for i, at := range p.at {
		if at.Before(start) {
			continue
		}
		for !at.Before(end) {
			out = append(out, quantile(cur, 0.99))
			cur, end = nil, end.Add(span)
		}
		cur = append(cur, p.latencies[i])
	}
	return append(out, quantile(cur, 0.99))
}

func (e *Env) startProbe(ctx context.Context) (*probe, error) {
	cfg := rest.CopyConfig(e.FloorID.Config)
	cfg.QPS, cfg.Burst = 100, 100 // above its 10 a second: the client never waits on its own limiter
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	p := &probe{}
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			start := time.Now()
			if _, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err == nil {
				p.mu.Lock()
				p.latencies = append(p.latencies, time.Since(start))
				p.at = append(p.at, start)
				p.mu.Unlock()
			}
		}
	}()
	return p, nil
}

// p99 is the p99 of the latencies seen since the last call, which it forgets.
func (p *probe) p99() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := quantile(p.latencies, 0.99)
	p.latencies, p.at = nil, nil
	return q
}

// MeasureStartup grows the startup fleet to n CSVs, starts a fresh
// csv-cleaner, and times until it holds everything, with a probe client's
// latency idle and during the start. The fleet stays for the next size.
func (e *Env) MeasureStartup(ctx context.Context, have, n int, args ...string) (Startup, error) {
	res := Startup{CSVs: n}
	id := "startup"
	if have == 0 {
		if err := e.policy(ctx, id); err != nil {
			return res, err
		}
	}
	if err := e.startupFleet(ctx, id, have, n); err != nil {
		return res, err
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	h := &held{objs: map[heldKey]heldState{}}
	sel := "bench=" + id
	if err := e.watchHeld(wctx, h, csvGVR, sel, decide.DefaultFinalizer); err != nil {
		return res, err
	}
	for _, gvk := range rbac.HeldKinds {
		gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: map[string]string{"ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings"}[gvk.Kind]}
		if err := e.watchHeld(wctx, h, gvr, sel, rbac.HoldFinalizer); err != nil {
			return res, err
		}
	}
	if err := controlplane.WaitFor(ctx, 5*time.Minute, 50*time.Millisecond, func(context.Context) (bool, error) { all, _ := h.count(); return all == 3*n, nil }); err != nil {
		return res, fmt.Errorf("watching the startup fleet: %w", err)
	}
	p, err := e.startProbe(wctx)
	if err != nil {
		return res, err
	}
	// 30 s idle: 300 GETs, whose p99 is the fourth slowest (over 5 s it was
	// the slowest of 50, and moved from 7.8 to 18.3 ms between runs).
	time.Sleep(probeIdle)
	res.ProbeIdleP99 = p.p99()

	// The write floor, as a user in system:masters (whom the API server
	// authorizes without RBAC) and as csv-cleaner's ServiceAccount, each
	// with a finalizer of its own onto what csv-cleaner will patch.
	for _, f := range []struct {
		floor *WriteFloor
		cfg   *rest.Config
		id    string
	}{{&res.FloorMasters, e.CP.MastersToken, "system:masters"}, {&res.Floor, e.CleanerID.Config, "csv-cleaner's ServiceAccount"}} {
		finalizer := fmt.Sprintf("bench.csv-cleaner.io/floor-%d-%d", n, len(f.id))
		if *f.floor, err = e.measureWriteFloor(ctx, f.cfg, f.id, finalizer, h, p); err != nil {
			return res, fmt.Errorf("the write floor as %s: %w", f.id, err)
		}
		// The watch sees every floor patch before the next one reads the objects' versions.
		if err := controlplane.WaitFor(ctx, 5*time.Minute, 50*time.Millisecond, func(context.Context) (bool, error) { return h.allCarry(finalizer), nil }); err != nil {
			return res, fmt.Errorf("watching the write floor's patches: %w", err)
		}
	}
	time.Sleep(5 * time.Second) // the API server settles, and the probe forgets the floor
	_ = p.p99()

	start := time.Now()
	c, err := e.StartCleaner(ctx, fmt.Sprintf("csv-cleaner-startup-%d", n), args...)
	if err != nil {
		return res, err
	}
	defer func() { _ = c.Stop(30 * time.Second) }()
	meter, err := e.cpuMeter(c)
	if err != nil {
		return res, err
	}
	if path := os.Getenv("BENCH_APISERVER_PROFILE"); path != "" {
		go e.profileAPIServer(ctx, path, 30*time.Second)
	}
	pctx, stopPace := context.WithCancel(ctx)
	paceDone := make(chan []float64)
	go func() { paceDone <- samplePace(pctx, c) }()
	res.CPU, err = meter.during(func() error {
		return controlplane.WaitFor(ctx, 30*time.Minute, 50*time.Millisecond, func(context.Context) (bool, error) { all, got := h.count(); return got == all, nil })
	})
	stopPace()
	res.PaceLimits = <-paceDone
	if err != nil {
		return res, fmt.Errorf("waiting for csv-cleaner to hold the startup fleet: %w", err)
	}
	res.Took = time.Since(start)
	res.ProbeSpans = p.p99Since(start, 10*time.Second)
	res.ProbeP99 = p.p99()
	m, err := c.Scrape(ctx)
	if err != nil {
		return res, err
	}
	res.Requests = m.Sum("rest_client_requests_total", nil)
	res.RequestsByVerb = m.SumBy("csv_cleaner_client_requests_total", "verb")
	res.Conflicts = m.Sum("rest_client_requests_total", map[string]string{"code": "409"})
	res.PeakInflight = m.Sum("csv_cleaner_client_requests_in_flight_max", nil)
	res.PeakRSSMiB, err = c.PeakRSSMiB()
	return res, err
}

func ptrTo[T any](v T) *T { return &v }

// samplePace reads csv-cleaner's pace limit every second until ctx ends.
func samplePace(ctx context.Context, c *Cleaner) []float64 {
	var out []float64
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return out
		case <-tick.C:
		}
		if m, err := c.Scrape(ctx); err == nil {
			if v := m.Sum("csv_cleaner_write_pace_limit", nil); v > 0 {
				out = append(out, v)
			}
		}
	}
}

// profileAPIServer writes a CPU profile of kube-apiserver over d to path
// (BENCH_APISERVER_PROFILE=path): what the first start costs it, by function.
func (e *Env) profileAPIServer(ctx context.Context, path string, d time.Duration) {
	cs, err := kubernetes.NewForConfig(e.CP.Config)
	if err != nil {
		return
	}
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").Param("seconds", fmt.Sprint(int(d.Seconds()))).
		Timeout(d + 30*time.Second).DoRaw(ctx)
	if err == nil {
		_ = os.WriteFile(path, raw, 0o644)
	}
}

package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
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

// held follows, through watches, which objects carry a finalizer.
type held struct {
	mu   sync.Mutex
	objs map[string]bool
}

func (h *held) count() (all, held int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ok := range h.objs {
		all++
		if ok {
			held++
		}
	}
	return all, held
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
			key := gvr.Resource + " " + types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}.String()
			h.mu.Lock()
			if ev.Type == watch.Deleted {
				delete(h.objs, key)
			} else {
				h.objs[key] = slices.Contains(o.GetFinalizers(), finalizer)
			}
			h.mu.Unlock()
		}
	}()
	return nil
}

// probe GETs a namespace every 100 ms as its own client and keeps the latencies.
type probe struct {
	mu        sync.Mutex
	latencies []time.Duration
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
	p.latencies = nil
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
	h := &held{objs: map[string]bool{}}
	sel := "bench=" + id
	if err := e.watchHeld(wctx, h, csvGVR, sel, plan.DefaultFinalizer); err != nil {
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
	time.Sleep(5 * time.Second)
	res.ProbeIdleP99 = p.p99()

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
	res.CPU, err = meter.during(func() error {
		return controlplane.WaitFor(ctx, 30*time.Minute, 50*time.Millisecond, func(context.Context) (bool, error) { all, got := h.count(); return got == all, nil })
	})
	if err != nil {
		return res, fmt.Errorf("waiting for csv-cleaner to hold the startup fleet: %w", err)
	}
	res.Took = time.Since(start)
	res.ProbeP99 = p.p99()
	m, err := c.Scrape(ctx)
	if err != nil {
		return res, err
	}
	res.Requests = m.Sum("rest_client_requests_total", nil)
	res.Conflicts = m.Sum("rest_client_requests_total", map[string]string{"code": "409"})
	res.PeakInflight = m.Sum("csv_cleaner_client_requests_in_flight_max", nil)
	res.PeakRSSMiB, err = c.PeakRSSMiB()
	return res, err
}

func ptrTo[T any](v T) *T { return &v }

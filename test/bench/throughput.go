package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// targetNamespaces is how many namespaces the operands are spread over.
const targetNamespaces = 100

// Throughput is one size of the uninstall throughput benchmark.
type Throughput struct {
	Operands int
	// Runs are the runs of this size, each an uninstall and a floor.
	Runs []ThroughputRun `json:",omitempty"`
	// Uninstall: from the CSV's deletion to the CSV being gone (the median of the runs).
	Uninstall time.Duration
	// Floor: the per-object floor, a bare client's UID-guarded delete of
	// each object of an identical second set, until all are gone
	// (perObjectFloor; the median of the runs).
	Floor time.Duration
	// Collection: DeleteCollection per namespace per CRD on an identical
	// third set, until all are gone, in the first run; for information
	// (collectionFloor).
	Collection time.Duration
	// PeakInflight is the most requests csv-cleaner had in flight at once.
	PeakInflight float64
	// PeakRSSMiB is the peak resident set size of the csv-cleaner that ran
	// the uninstalls, from its start to the last CSV being gone.
	PeakRSSMiB float64
	// FloorCPU and UninstallCPU are the CPU time each process used during
	// the floor and during the uninstall (the mean of the runs).
	FloorCPU, UninstallCPU CPU
	// Requests and FloorRequests count the uninstall's requests (from the
	// CSV's deletion until it is gone, csv_cleaner_client_requests_total)
	// and the floor's, by "verb resource" (the mean of the runs).
	Requests, FloorRequests map[string]float64 `json:",omitempty"`
}

// ThroughputRun is one run of a size: an uninstall and the per-object floor.
type ThroughputRun struct {
	Uninstall, Floor       time.Duration
	FloorFirst             bool
	FloorCPU, UninstallCPU CPU
}

// Ratio is the uninstall's time over the per-object floor's.
func (t Throughput) Ratio() float64 { return t.Uninstall.Seconds() / t.Floor.Seconds() }

// CPURatio is kube-apiserver's CPU time during the uninstall over its time during the floor.
func (t Throughput) CPURatio() float64 { return t.UninstallCPU.APIServer / t.FloorCPU.APIServer }

// CollectionRatio is the uninstall's time over DeleteCollection's.
func (t Throughput) CollectionRatio() float64 { return t.Uninstall.Seconds() / t.Collection.Seconds() }

// perOperand is CPU seconds as milliseconds per operand.
func (t Throughput) perOperand(seconds float64) float64 { return seconds * 1000 / float64(t.Operands) }

// MeasureThroughput times the uninstall of n operands (3 CRDs over 100
// namespaces) owned by a managed CSV against the per-object floor on an
// identical set, runs times, the two taking turns at going first,
// with one csv-cleaner that elects itself leader, as it runs in a cluster;
// the floor runs as csv-cleaner's ServiceAccount. The first run also times
// DeleteCollection on a third set.
func (e *Env) MeasureThroughput(ctx context.Context, n, runs int) (Throughput, error) {
	res := Throughput{Operands: n}
	cleaner, err := e.StartCleaner(ctx, "csv-cleaner-throughput-"+strconv.Itoa(n), "--leader-elect", "--leader-election-namespace="+identityNamespace)
	if err != nil {
		return res, err
	}
	defer func() { _ = cleaner.Stop(30 * time.Second) }()
	var done []Throughput
	for r := range max(runs, 1) {
		run := throughputRun{id: fmt.Sprintf("tp%d-%d", n, r), floors: true, collection: r == 0, floorAfter: r%2 == 1, floorID: e.CleanerID}
		one, _, err := e.throughputOn(ctx, cleaner, n, run)
		if err != nil {
			return res, fmt.Errorf("run %d of %d: %w", r+1, runs, err)
		}
		done = append(done, one)
	}
	return combineRuns(n, done), nil
}

// combineRuns is the medians of the runs' times, the means of their CPU
// times and requests, the first run's DeleteCollection and the last run's
// peaks (csv-cleaner's since its start).
func combineRuns(n int, runs []Throughput) Throughput {
	last := runs[len(runs)-1]
	res := Throughput{Operands: n, Collection: runs[0].Collection, PeakInflight: last.PeakInflight, PeakRSSMiB: last.PeakRSSMiB,
		Requests: map[string]float64{}, FloorRequests: map[string]float64{}}
	var un, fl []time.Duration
	k := float64(len(runs))
	for _, r := range runs {
		res.Runs = append(res.Runs, r.Runs...)
		un, fl = append(un, r.Uninstall), append(fl, r.Floor)
		res.UninstallCPU, res.FloorCPU = res.UninstallCPU.add(r.UninstallCPU.scale(1/k)), res.FloorCPU.add(r.FloorCPU.scale(1/k))
		for key, v := range r.Requests {
			res.Requests[key] += v / k
		}
		for key, v := range r.FloorRequests {
			res.FloorRequests[key] += v / k
		}
	}
	res.Uninstall, res.Floor = median(un), median(fl)
	return res
}

// median is the middle of ds, or the mean of the two middle ones.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// throughputRun is one run of the throughput benchmark.
type throughputRun struct {
	id, name string
	// args are csv-cleaner's extra arguments.
	args []string
	// floors measures the per-object floor too, as floorID, after the
	// uninstall if floorAfter; collection DeleteCollection too.
	floors, collection, floorAfter bool
	floorID                        *Identity
	// onDelete, if set, runs just before the CSV is deleted.
	onDelete func()
}

// throughput is one run on a csv-cleaner of its own; it returns
// csv-cleaner's metrics as they were after the uninstall.
func (e *Env) throughput(ctx context.Context, n int, run throughputRun) (Throughput, Families, error) {
	cleaner, err := e.StartCleaner(ctx, run.name, run.args...)
	if err != nil {
		return Throughput{Operands: n}, nil, err
	}
	defer func() { _ = cleaner.Stop(30 * time.Second) }()
	return e.throughputOn(ctx, cleaner, n, run)
}

// throughputOn is one run on cleaner.
func (e *Env) throughputOn(ctx context.Context, cleaner *Cleaner, n int, run throughputRun) (Throughput, Families, error) {
	res := Throughput{Operands: n}
	id := run.id
	ns, err := e.namespaces(ctx, "bench-target", targetNamespaces)
	if err != nil {
		return res, nil, err
	}
	in := fixtures.Install{Namespace: id, CSVName: id + ".v1.0.0", Targets: ns, CRDs: crds(id), Labels: map[string]string{"bench": id}, OLMAdminRoles: true}
	var floorCRDs, collectionCRDs []fixtures.CRD
	if run.floors {
		floorCRDs = crds(id + "-floor")
	}
	if run.collection {
		collectionCRDs = crds(id + "-collection")
	}
	floorID := cmp.Or(run.floorID, e.FloorID)
	if err := e.policy(ctx, id); err != nil {
		return res, nil, err
	}
	if _, err := in.Create(ctx, e.Client); err != nil {
		return res, nil, err
	}
	for _, set := range [][]fixtures.CRD{floorCRDs, collectionCRDs} {
		for _, c := range set {
			if err := fixtures.CreateCRD(ctx, e.Client, in.CRDObject(c)); err != nil {
				return res, nil, err
			}
		}
	}
	// OLM's admin roles of the other sets too: the floors may run as csv-cleaner.
	others := fixtures.Install{CRDs: slices.Concat(floorCRDs, collectionCRDs)}
	if err := others.CreateAdminRoles(ctx, e.Client); err != nil {
		return res, nil, err
	}
	if err := e.waitOperandRights(ctx, slices.Concat(in.CRDs, others.CRDs)); err != nil {
		return res, nil, err
	}
	for _, set := range [][]fixtures.CRD{in.CRDs, floorCRDs, collectionCRDs} {
		if len(set) == 0 {
			continue // not measured in this run
		}
		if err := e.operands(ctx, set, ns, n); err != nil {
			return res, nil, err
		}
	}
	if err := e.waitFinalizer(ctx, in.Key()); err != nil {
		return res, nil, err
	}

	meter, err := e.cpuMeter(cleaner)
	if err != nil {
		return res, nil, err
	}
	if run.collection {
		if res.Collection, err = e.collectionFloor(ctx, floorID, collectionCRDs, ns); err != nil {
			return res, nil, err
		}
	}
	floor := func() (err error) {
		res.FloorCPU, err = meter.during(func() (err error) {
			res.Floor, res.FloorRequests, err = e.perObjectFloorCounted(ctx, floorID, floorCRDs)
			return err
		})
		return err
	}
	if run.floors && !run.floorAfter {
		if err := floor(); err != nil {
			return res, nil, err
		}
	}
	gone, err := e.watchGone(ctx, in.Namespace, in.CSVName)
	if err != nil {
		return res, nil, err
	}
	if run.onDelete != nil {
		run.onDelete()
	}
	before, err := cleaner.Scrape(ctx)
	if err != nil {
		return res, nil, err
	}
	// Operands created in the deletion's second would be kept (CreatedAfterDeletion).
	fixtures.WaitNextSecond(time.Now())
	res.UninstallCPU, err = meter.during(func() error {
		start := time.Now()
		if err := e.Client.Delete(ctx, in.CSV()); err != nil {
			return fmt.Errorf("deleting CSV %s: %w", in.Key(), err)
		}
		select {
		case <-gone:
		case <-ctx.Done():
			return fmt.Errorf("waiting for CSV %s to go: %w", in.Key(), ctx.Err())
		}
		res.Uninstall = time.Since(start)
		return nil
	})
	if err != nil {
		return res, nil, err
	}
	if run.floors && run.floorAfter {
		if err := floor(); err != nil {
			return res, nil, err
		}
	}
	// Read once, after: scraping csv-cleaner while it works would load it
	// and the machine (gzip and text encoding of every metric).
	m, err := cleaner.Scrape(ctx)
	if err != nil {
		return res, nil, err
	}
	res.PeakInflight = m.Sum("csv_cleaner_client_requests_in_flight_max", nil)
	res.Requests = m.SumByLabels("csv_cleaner_client_requests_total", "verb", "resource")
	for k, v := range before.SumByLabels("csv_cleaner_client_requests_total", "verb", "resource") {
		if res.Requests[k] -= v; res.Requests[k] == 0 {
			delete(res.Requests, k)
		}
	}
	// The runs' and the floor's groups named alike, so that they add up and compare.
	res.Requests = renameGroup(res.Requests, id+".", "")
	res.FloorRequests = renameGroup(res.FloorRequests, id+"-floor.", "")
	if res.PeakRSSMiB, err = cleaner.PeakRSSMiB(); err != nil {
		return res, m, err
	}
	// csv-cleaner runs with its own ClusterRole: a refused request means the role lacks a rule.
	if refused := m.Sum("rest_client_requests_total", map[string]string{"code": "403"}); refused > 0 {
		return res, m, fmt.Errorf("kube-apiserver refused %.0f of csv-cleaner's requests: manifests/rbac/role.yaml lacks a permission (see its log)", refused)
	}
	left, err := e.count(ctx, in.CRDs)
	if err != nil {
		return res, m, fmt.Errorf("counting the operands left: %w", err)
	}
	if left > 0 {
		return res, m, fmt.Errorf("%d operands left after the uninstall", left)
	}
	for _, c := range slices.Concat(in.CRDs, floorCRDs, collectionCRDs) {
		if err := e.Client.Delete(ctx, in.CRDObject(c)); client.IgnoreNotFound(err) != nil {
			return res, m, fmt.Errorf("deleting CRD %s: %w", c.Name(), err)
		}
	}
	if run.floors {
		res.Runs = []ThroughputRun{{Uninstall: res.Uninstall, Floor: res.Floor, FloorFirst: !run.floorAfter, FloorCPU: res.FloorCPU, UninstallCPU: res.UninstallCPU}}
	}
	return res, m, nil
}

// collectionFloor deletes the operands as a bare client-go program would
// with DeleteCollection: one per namespace per CRD, as many at once as
// csv-cleaner has deletes in flight, with csv-cleaner's client QPS and
// burst, until none is left. It is not the reference: DeleteCollection
// cannot guard each object by its UID, so no uninstall that deletes exactly
// the planned objects can reach it.
func (e *Env) collectionFloor(ctx context.Context, id *Identity, set []fixtures.CRD, namespaces []string) (time.Duration, error) {
	cfg := rest.CopyConfig(id.Config)
	cfg.QPS, cfg.Burst = cleanup.DefaultQPS, cleanup.DefaultBurst
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	type job struct {
		gvr schema.GroupVersionResource
		ns  string
	}
	var jobs []job
	for _, c := range set {
		for _, ns := range namespaces {
			jobs = append(jobs, job{schema.GroupVersionResource{Group: c.Group, Version: "v1", Resource: c.Plural}, ns})
		}
	}
	start := time.Now()
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	ch := make(chan job)
	for range cleanup.DefaultDeleteWorkers {
		wg.Go(func() {
			for j := range ch {
				if err := dyn.Resource(j.gvr).Namespace(j.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	if len(errs) > 0 {
		return 0, fmt.Errorf("DeleteCollection: %w", errs[0])
	}
	// Poll rarely: a LIST is a consistent read from etcd, and the harness must
	// not load what it measures. 200 ms is 2 % of a 10 s run.
	err = controlplane.WaitFor(ctx, 30*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		left, err := e.count(ctx, set)
		return left == 0, err
	})
	return time.Since(start), err
}

// perObjectFloor deletes the operands as a bare client-go program that
// keeps csv-cleaner's rule "exactly the listed objects" would: it lists each
// CRD's instances as metadata, 500 a page, and deletes each with its UID as
// a precondition, as many at once as csv-cleaner has deletes in flight,
// with csv-cleaner's client QPS and burst, until none is left. It plans
// nothing, reads no CSV, records nothing: the reference of an uninstall.
func (e *Env) perObjectFloor(ctx context.Context, set []fixtures.CRD) (time.Duration, error) {
	took, _, err := e.perObjectFloorCounted(ctx, e.FloorID, set)
	return took, err
}

// perObjectFloorCounted is perObjectFloor, with its requests counted by
// "verb resource" (its wait until none is left is the harness's, not
// counted), run as id.
func (e *Env) perObjectFloorCounted(ctx context.Context, id *Identity, set []fixtures.CRD) (time.Duration, map[string]float64, error) {
	cfg := rest.CopyConfig(id.Config)
	cfg.QPS, cfg.Burst = cleanup.DefaultQPS, cleanup.DefaultBurst
	var counted requestCounter
	cfg.Wrap(counted.wrap)
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return 0, nil, err
	}
	type job struct {
		gvr schema.GroupVersionResource
		obj metav1.PartialObjectMetadata
	}
	start := time.Now()
	jobs := make(chan job)
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for range cleanup.DefaultDeleteWorkers {
		wg.Go(func() {
			for j := range jobs {
				uid := j.obj.UID
				err := meta.Resource(j.gvr).Namespace(j.obj.Namespace).Delete(ctx, j.obj.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
				if err != nil && !apierrors.IsNotFound(err) {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	var listErr error
list:
	for _, c := range set {
		gvr := schema.GroupVersionResource{Group: c.Group, Version: "v1", Resource: c.Plural}
		for next := ""; ; {
			page, err := meta.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 500, Continue: next})
			if err != nil {
				listErr = err
				break list
			}
			for _, o := range page.Items {
				jobs <- job{gvr, o}
			}
			if next = page.Continue; next == "" {
				break
			}
		}
	}
	close(jobs)
	wg.Wait()
	if err := errors.Join(append(errs, listErr)...); err != nil {
		return 0, nil, fmt.Errorf("per-object floor: %w", err)
	}
	err = controlplane.WaitFor(ctx, 30*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		left, err := e.count(ctx, set)
		return left == 0, err
	})
	return time.Since(start), counted.counts(), err
}

// renameGroup replaces old with new in the keys of counts.
func renameGroup(counts map[string]float64, old, new string) map[string]float64 {
	out := make(map[string]float64, len(counts))
	for k, v := range counts {
		out[strings.Replace(k, old, new, 1)] += v
	}
	return out
}

// requestCounter counts a client's requests by "verb resource".
type requestCounter struct {
	mu sync.Mutex
	n  map[string]float64
}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return promhttp.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
		verb, resource := cleanup.VerbAndResource(req)
		c.mu.Lock()
		if c.n == nil {
			c.n = map[string]float64{}
		}
		c.n[verb+" "+resource]++
		c.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

func (c *requestCounter) counts() map[string]float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// count counts the instances of the CRDs that are left, terminating ones included.
func (e *Env) count(ctx context.Context, set []fixtures.CRD) (int, error) {
	n := 0
	for _, c := range set {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(c.GVK().GroupVersion().WithKind(c.Kind + "List"))
		if err := e.Client.List(ctx, list, client.Limit(1)); err != nil {
			return 0, err
		}
		n += len(list.Items)
		if list.RemainingItemCount != nil {
			n += int(*list.RemainingItemCount)
		} else if list.Continue != "" {
			n++ // more, uncounted
		}
	}
	return n, nil
}

// waitFinalizer waits until csv-cleaner has put its finalizer on the CSV.
func (e *Env) waitFinalizer(ctx context.Context, key client.ObjectKey) error {
	return controlplane.WaitFor(ctx, 2*time.Minute, 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		csv := &operatorsv1alpha1.ClusterServiceVersion{}
		if err := e.Client.Get(ctx, key, csv); err != nil {
			return false, err
		}
		return slices.Contains(csv.Finalizers, decide.DefaultFinalizer), nil
	})
}

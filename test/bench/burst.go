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
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// Burst is a burst of uninstalls: many CSVs deleted at once.
type Burst struct {
	CSVs, OperandsPerCSV int
	// RecordVisible is, per CSV, the time from its deletion being seen to its
	// CSVCleanup being seen at phase Deleting; Complete, to the CSV being gone.
	RecordVisible, Complete []time.Duration
	// NeverDeleting counts the records never seen at phase Deleting.
	NeverDeleting int
	// Total runs from the first deletion to the last CSV gone; Floor is the
	// per-object floor (perObjectFloor) on the same number of operands.
	Total, Floor time.Duration
}

// Ratio is the burst's total over the per-object floor.
func (b Burst) Ratio() float64 { return b.Total.Seconds() / b.Floor.Seconds() }

// quantile is the q-quantile of ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

var csvGVR = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "clusterserviceversions"}
var recordGVR = cleanupv1alpha1.GroupVersion.WithResource("csvcleanups")

// burstTimes collects, from watches opened before the deletes, when each
// CSV's deletion, its record's phase Deleting, and its disappearance are seen.
type burstTimes struct {
	mu        sync.Mutex
	deleting  map[types.NamespacedName]time.Time // the CSV's deletionTimestamp seen
	recorded  map[types.NamespacedName]time.Time // its record at Deleting
	firstSeen map[types.NamespacedName]string    // the first phase its record was seen at
	gone      map[types.NamespacedName]time.Time
}

func (b *burstTimes) note(m map[types.NamespacedName]time.Time, key types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := m[key]; !ok {
		m[key] = time.Now()
	}
}

// watchBurst watches the CSVs labelled bench=<id> and every CSVCleanup.
func (e *Env) watchBurst(ctx context.Context, id string) (*burstTimes, error) {
	b := &burstTimes{deleting: map[types.NamespacedName]time.Time{}, recorded: map[types.NamespacedName]time.Time{},
		firstSeen: map[types.NamespacedName]string{}, gone: map[types.NamespacedName]time.Time{}}
	csvs, err := e.retryWatch(ctx, csvGVR, "bench="+id)
	if err != nil {
		return nil, fmt.Errorf("watching CSVs: %w", err)
	}
	records, err := e.retryWatch(ctx, recordGVR, "")
	if err != nil {
		csvs.Stop()
		return nil, fmt.Errorf("watching CSVCleanups: %w", err)
	}
	key := func(o *unstructured.Unstructured) types.NamespacedName {
		return types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
	}
	go func() {
		defer csvs.Stop()
		for ev := range csvs.ResultChan() {
			o, ok := ev.Object.(*unstructured.Unstructured)
			switch {
			case !ok:
			case ev.Type == watch.Deleted:
				b.note(b.gone, key(o))
			case o.GetDeletionTimestamp() != nil:
				b.note(b.deleting, key(o))
			}
		}
	}()
	go func() {
		defer records.Stop()
		for ev := range records.ResultChan() {
			o, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			phase, _, _ := unstructured.NestedString(o.Object, "status", "phase")
			if phase == "" {
				continue
			}
			b.mu.Lock()
			if _, seen := b.firstSeen[key(o)]; !seen {
				b.firstSeen[key(o)] = phase
			}
			b.mu.Unlock()
			if phase == string(cleanupv1alpha1.PhaseDeleting) {
				b.note(b.recorded, key(o))
			}
		}
	}()
	return b, nil
}

// retryWatch watches gvr's objects matching selector from now on, and
// watches again from the last revision it saw whenever the API server ends
// the watch: a plain watch that ends loses the events until it is
// restarted, and the burst would wait for deletions it never hears of.
func (e *Env) retryWatch(ctx context.Context, gvr schema.GroupVersionResource, selector string) (watch.Interface, error) {
	list, err := e.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: selector, Limit: 1})
	if err != nil {
		return nil, err
	}
	return watchtools.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.LabelSelector = selector
			return e.Dynamic.Resource(gvr).Watch(ctx, opts)
		},
	})
}

// MeasureBurst installs csvs operators, each owning one CRD with perCSV
// operands in 2 target namespaces, deletes every CSV at once, and times
// when each record shows Deleting and each CSV is gone, against the
// per-object floor on as many operands.
func (e *Env) MeasureBurst(ctx context.Context, csvs, perCSV int) (Burst, error) {
	res := Burst{CSVs: csvs, OperandsPerCSV: perCSV}
	id := "burst"
	cleaner, err := e.StartCleaner(ctx, "csv-cleaner-burst")
	if err != nil {
		return res, err
	}
	defer func() { _ = cleaner.Stop(30 * time.Second) }()
	targets, err := e.namespaces(ctx, "bench-burst", 2)
	if err != nil {
		return res, err
	}
	if err := e.policy(ctx, id); err != nil {
		return res, err
	}
	installs := make([]fixtures.Install, csvs)
	for i := range installs {
		installs[i] = fixtures.Install{Namespace: fmt.Sprintf("burst-%03d", i), CSVName: fmt.Sprintf("burst-%03d.v1.0.0", i), Targets: targets,
			CRDs: []fixtures.CRD{{Group: fmt.Sprintf("b%03d.burst.bench.example.com", i), Kind: "Item", Plural: "items"}}, Labels: map[string]string{"bench": id}, OLMAdminRoles: true}
	}
	if err := parallel(ctx, csvs, func(ctx context.Context, i int) error {
		_, err := installs[i].Create(ctx, e.Client)
		return err
	}); err != nil {
		return res, err
	}
	floorCRDs := crds(id + "-floor")
	for _, c := range floorCRDs {
		if err := fixtures.CreateCRD(ctx, e.Client, installs[0].CRDObject(c)); err != nil {
			return res, err
		}
	}
	var last time.Time
	for i := range installs {
		if err := e.waitOperandRights(ctx, installs[i].CRDs); err != nil {
			return res, err
		}
		if err := e.operands(ctx, installs[i].CRDs, targets, perCSV); err != nil {
			return res, err
		}
		last = time.Now()
	}
	if err := e.operands(ctx, floorCRDs, targets, csvs*perCSV); err != nil {
		return res, err
	}
	for i := range installs {
		if err := e.waitFinalizer(ctx, installs[i].Key()); err != nil {
			return res, err
		}
	}
	if res.Floor, err = e.perObjectFloor(ctx, floorCRDs); err != nil {
		return res, err
	}

	wctx, stop := context.WithCancel(ctx)
	defer stop()
	times, err := e.watchBurst(wctx, id)
	if err != nil {
		return res, err
	}
	fixtures.WaitNextSecond(last) // no operand falls in a deletion's second
	start := time.Now()
	if err := parallel(ctx, csvs, func(ctx context.Context, i int) error {
		return e.Client.Delete(ctx, installs[i].CSV())
	}); err != nil {
		return res, fmt.Errorf("deleting the CSVs: %w", err)
	}
	err = controlplane.WaitFor(ctx, 30*time.Minute, 50*time.Millisecond, func(context.Context) (bool, error) {
		times.mu.Lock()
		defer times.mu.Unlock()
		return len(times.gone) == csvs, nil
	})
	if err != nil {
		return res, fmt.Errorf("waiting for the burst's CSVs to go: %w", err)
	}
	times.mu.Lock()
	defer times.mu.Unlock()
	end := start
	for i := range installs {
		k := installs[i].Key()
		seen, ok := times.deleting[k]
		if !ok {
			seen = start // deleted before the watch saw it terminating
		}
		gone := times.gone[k]
		end = later(end, gone)
		res.Complete = append(res.Complete, gone.Sub(seen))
		if at, ok := times.recorded[k]; ok {
			res.RecordVisible = append(res.RecordVisible, max(at.Sub(seen), 0))
		} else {
			res.NeverDeleting++
		}
	}
	res.Total = end.Sub(start)
	left := 0
	for i := range installs {
		n, err := e.count(ctx, installs[i].CRDs)
		if err != nil {
			return res, err
		}
		left += n
	}
	if left > 0 {
		return res, fmt.Errorf("%d operands left after the burst", left)
	}
	return res, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// csvNamespaces is how many namespaces the many CSVs are spread over.
const csvNamespaces = 50

// Memory is csv-cleaner's peak RSS with a number of CSVs in the cluster.
type Memory struct {
	CSVs, Managed int
	PeakRSSMiB    float64
	// HeapInuseMiB is Go's heap in use when the peak was read, to tell live data from garbage.
	HeapInuseMiB float64
}

// fleet is the CSVs the memory and idle benchmarks create, cumulatively.
type fleet struct {
	namespaces []string
	copies     int
	managed    int
}

var unrelated = fixtures.CRD{Group: "unrelated.bench.example.com", Kind: "Thing", Plural: "things"}

// Unrelated creates n custom resources of a CRD no CSV owns.
func (e *Env) Unrelated(ctx context.Context, n int) error {
	ns, err := e.namespaces(ctx, "bench-target", targetNamespaces)
	if err != nil {
		return err
	}
	if err := fixtures.CreateCRD(ctx, e.Client, fixtures.Install{}.CRDObject(unrelated)); err != nil {
		return err
	}
	return e.operands(ctx, []fixtures.CRD{unrelated}, ns, n)
}

// grow adds CSVs until the fleet has managed real ones and copies copies.
// Real CSVs are labelled bench=fleet, which a CleanupPolicy selects; copies
// carry OLM's olm.copiedFrom label as well.
func (e *Env) grow(ctx context.Context, f *fleet, managed, copies int) error {
	if f.namespaces == nil {
		ns, err := e.namespaces(ctx, "bench-csvs", csvNamespaces)
		if err != nil {
			return err
		}
		f.namespaces = ns
		if err := e.policy(ctx, "fleet"); err != nil {
			return err
		}
	}
	mk := func(kind string, i int) *operatorsv1alpha1.ClusterServiceVersion {
		ns := f.namespaces[i%len(f.namespaces)]
		in := fixtures.Install{Namespace: ns, CSVName: fmt.Sprintf("%s-%05d.v1.0.0", kind, i), Targets: []string{ns},
			CRDs: []fixtures.CRD{{Group: "fleet.bench.example.com", Kind: "Widget", Plural: "widgets"}}, Labels: map[string]string{"bench": "fleet"}}
		csv := in.CSV()
		if kind == "copy" {
			csv.Labels[operatorsv1alpha1.CopiedLabelKey] = "bench-origin"
		}
		return csv
	}
	if err := parallel(ctx, managed-f.managed, func(ctx context.Context, i int) error {
		return e.Client.Create(ctx, mk("op", f.managed+i))
	}); err != nil {
		return fmt.Errorf("creating CSVs: %w", err)
	}
	f.managed = max(f.managed, managed)
	if err := parallel(ctx, copies-f.copies, func(ctx context.Context, i int) error {
		return e.Client.Create(ctx, mk("copy", f.copies+i))
	}); err != nil {
		return fmt.Errorf("creating copied CSVs: %w", err)
	}
	f.copies = max(f.copies, copies)
	return nil
}

// waitManaged waits until csv-cleaner has put its finalizer on every managed CSV of the fleet.
func (e *Env) waitManaged(ctx context.Context, f *fleet) error {
	return controlplane.WaitFor(ctx, 10*time.Minute, 500*time.Millisecond, func(ctx context.Context) (bool, error) {
		csvs := &operatorsv1alpha1.ClusterServiceVersionList{}
		if err := e.Client.List(ctx, csvs, client.MatchingLabels{"bench": "fleet"}); err != nil {
			return false, err
		}
		held := 0
		for _, c := range csvs.Items {
			if slices.Contains(c.Finalizers, decide.DefaultFinalizer) {
				held++
			}
		}
		return held == f.managed, nil
	})
}

// MeasureMemory grows the fleet to total CSVs, 10 % real and 90 % copies,
// starts a fresh csv-cleaner, waits until it manages every real one, and
// reads its peak RSS.
func (e *Env) MeasureMemory(ctx context.Context, f *fleet, total int) (Memory, error) {
	res := Memory{CSVs: total, Managed: total / 10}
	if err := e.grow(ctx, f, res.Managed, total-res.Managed); err != nil {
		return res, err
	}
	c, err := e.StartCleaner(ctx, fmt.Sprintf("csv-cleaner-memory-%d", total))
	if err != nil {
		return res, err
	}
	defer func() { _ = c.Stop(30 * time.Second) }()
	if err := e.waitManaged(ctx, f); err != nil {
		return res, err
	}
	time.Sleep(5 * time.Second) // a few resyncs of the caches' watches
	if res.PeakRSSMiB, err = c.PeakRSSMiB(); err != nil {
		return res, err
	}
	m, err := c.Scrape(ctx)
	if err != nil {
		return res, err
	}
	res.HeapInuseMiB = m.Sum("go_memstats_heap_inuse_bytes", nil) / (1 << 20)
	return res, nil
}

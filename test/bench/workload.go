package bench

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// createWorkers is how many creates the harness has in flight while it sets up.
const createWorkers = 48

// parallel runs do(i) for i in [0, n) on createWorkers goroutines and
// returns the first error.
func parallel(ctx context.Context, n int, do func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range min(createWorkers, max(n, 1)) {
		wg.Go(func() {
			for i := range jobs {
				if err := do(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	return first
}

// namespaces creates count namespaces called prefix-000, prefix-001, ….
func (e *Env) namespaces(ctx context.Context, prefix string, count int) ([]string, error) {
	names := make([]string, count)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return names, parallel(ctx, count, func(ctx context.Context, i int) error {
		return client.IgnoreAlreadyExists(e.Client.Create(ctx, fixtures.Namespace(names[i])))
	})
}

// operands creates n instances spread evenly over the CRDs and namespaces.
func (e *Env) operands(ctx context.Context, crds []fixtures.CRD, namespaces []string, n int) error {
	return parallel(ctx, n, func(ctx context.Context, i int) error {
		crd := crds[i%len(crds)]
		u := fixtures.Operand(crd, namespaces[(i/len(crds))%len(namespaces)], fmt.Sprintf("o-%06d", i))
		if err := unstructured.SetNestedField(u.Object, int64(i), "spec", "index"); err != nil {
			return err
		}
		if err := e.Client.Create(ctx, u); err != nil {
			return fmt.Errorf("creating operand %d: %w", i, err)
		}
		return nil
	})
}

// crds are three CRDs in group <id>.bench.example.com.
func crds(id string) []fixtures.CRD {
	group := id + ".bench.example.com"
	return []fixtures.CRD{
		{Group: group, Kind: "Alpha", Plural: "alphas"},
		{Group: group, Kind: "Beta", Plural: "betas"},
		{Group: group, Kind: "Gamma", Plural: "gammas"},
	}
}

// waitOperandRights waits until csv-cleaner's operand role has aggregated
// OLM's admin role of each CRD (fixtures.Install.OLMAdminRoles): csv-cleaner
// may then delete their instances, and no uninstall measured waits on it.
func (e *Env) waitOperandRights(ctx context.Context, crds []fixtures.CRD) error {
	for _, c := range crds {
		if err := fixtures.WaitAggregated(ctx, e.Client, rbac.OperandRole, c.Group, c.Plural); err != nil {
			return fmt.Errorf("waiting for csv-cleaner's rights on %s: %w", c.Name(), err)
		}
	}
	return nil
}

// policy creates a CleanupPolicy that selects the CSVs labelled bench=<id>.
func (e *Env) policy(ctx context.Context, id string) error {
	p := &cleanupv1alpha1.CleanupPolicy{ObjectMeta: metav1.ObjectMeta{Name: id}}
	p.Spec.CSVSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"bench": id}}
	if err := e.Client.Create(ctx, p); err != nil {
		return fmt.Errorf("creating CleanupPolicy %s: %w", id, err)
	}
	return nil
}

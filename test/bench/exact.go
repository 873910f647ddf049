package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/instances"
	"github.com/csv-cleaner/csv-cleaner/pkg/revision"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// ExactList is what csv-cleaner's lookup of the operands of a deletion's
// second costs (issue 28): a LIST of one kind in one namespace, metadata
// only, in pages of 500, at an exact earlier revision, against the same
// LIST as the uninstall sends it (consistent, the newest revision).
type ExactList struct {
	// Objects is how many objects the namespace holds.
	Objects int
	// Writes is how many writes separate the revision from the newest.
	Writes int
	// Consistent and Exact are the median of Reps lists each.
	Consistent, Exact time.Duration
	Reps              int
	// ConsistentCPU and ExactCPU are the CPU seconds kube-apiserver and etcd
	// spent per list of each kind (Cleaner is not measured).
	ConsistentCPU, ExactCPU CPU
	// Search is the search of a CSV's deletion revision after the fact (issue 32).
	Search RevisionSearchCost
}

// RevisionSearchCost is what finding a deletion's revision after the fact
// costs csv-cleaner (revision.Reader.Search): a CSV deleted, then
// Writes more writes, then the search.
type RevisionSearchCost struct {
	// ClusterRevision is etcd's revision when the search ran: the range it searched.
	ClusterRevision string
	// Lists is how many Exact LISTs it sent, Took how long it took (median of Reps).
	Lists int
	Took  time.Duration
	// CPU is kube-apiserver's and etcd's CPU per search.
	CPU CPU
}

// MeasureExactList creates n objects of one kind in one namespace, takes
// the revision, makes writes after it, and times both kinds of LIST.
func (e *Env) MeasureExactList(ctx context.Context, n int) (ExactList, error) {
	const reps = 15
	res := ExactList{Objects: n, Writes: n / 10, Reps: reps}
	id := "exact"
	set := crds(id)[:1]
	targets, err := e.namespaces(ctx, "bench-exact", 1)
	if err != nil {
		return res, err
	}
	in := fixtures.Install{Namespace: id, CSVName: id + ".v1.0.0", Targets: targets, CRDs: set, Labels: map[string]string{"bench": id}}
	if _, err := in.Create(ctx, e.Client); err != nil {
		return res, err
	}
	if err := e.operands(ctx, set, in.Targets, n); err != nil {
		return res, err
	}
	list := func(opts *metav1.ListOptions) error {
		for next := ""; ; {
			page := &metav1.PartialObjectMetadataList{}
			page.SetGroupVersionKind(set[0].GVK().GroupVersion().WithKind(set[0].Kind + "List"))
			o := &client.ListOptions{Namespace: in.Targets[0], Limit: 500, Continue: next}
			if next == "" {
				o.Raw = opts
			}
			if err := e.Client.List(ctx, page, o); err != nil {
				return fmt.Errorf("listing %s: %w", set[0].Plural, err)
			}
			if next = page.Continue; next == "" {
				return nil
			}
		}
	}
	probe := &metav1.PartialObjectMetadataList{}
	probe.SetGroupVersionKind(set[0].GVK().GroupVersion().WithKind(set[0].Kind + "List"))
	if err := e.Client.List(ctx, probe, client.InNamespace(in.Targets[0]), client.Limit(1)); err != nil {
		return res, err
	}
	revision := probe.ResourceVersion
	// A CSV whose deletion a finalizer holds, deleted at the revision the
	// search must find, before the later writes.
	subject := fixtures.Install{Namespace: id, CSVName: id + "-searched.v1.0.0", Targets: targets}.CSV()
	subject.Finalizers = []string{"bench.csv-cleaner.io/hold"}
	if err := e.Client.Create(ctx, subject); err != nil {
		return res, fmt.Errorf("creating CSV %s: %w", subject.Name, err)
	}
	if err := e.Client.Delete(ctx, subject); err != nil {
		return res, fmt.Errorf("deleting CSV %s: %w", subject.Name, err)
	}
	if err := e.Client.Get(ctx, client.ObjectKeyFromObject(subject), subject); err != nil {
		return res, err
	}
	deletedAt := subject.ResourceVersion
	// Writes after the revision: the same kind, in another namespace.
	later, err := e.namespaces(ctx, "bench-exact-later", 1)
	if err != nil {
		return res, err
	}
	if err := e.operands(ctx, set, later, res.Writes); err != nil {
		return res, err
	}
	apiServer, err := e.CP.APIServerPid()
	if err != nil {
		return res, err
	}
	etcd, err := e.CP.EtcdPid()
	if err != nil {
		return res, err
	}
	meter := cpuMeter{apiServer: apiServer, etcd: etcd, cleaner: apiServer} // no csv-cleaner runs here: its slot reads kube-apiserver again, unused
	timeIt := func(opts func() *metav1.ListOptions) (time.Duration, CPU, error) {
		var took []time.Duration
		cpu, err := meter.during(func() error {
			for range reps {
				start := time.Now()
				if err := list(opts()); err != nil {
					return err
				}
				took = append(took, time.Since(start))
			}
			return nil
		})
		slices.Sort(took)
		per := CPU{APIServer: cpu.APIServer / reps, Etcd: cpu.Etcd / reps}
		if len(took) == 0 {
			return 0, per, err
		}
		return took[len(took)/2], per, err
	}
	if res.Consistent, res.ConsistentCPU, err = timeIt(func() *metav1.ListOptions { return nil }); err != nil {
		return res, err
	}
	res.Exact, res.ExactCPU, err = timeIt(func() *metav1.ListOptions {
		return &metav1.ListOptions{ResourceVersion: revision, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	})
	if err != nil {
		return res, err
	}
	res.Search, err = e.measureSearch(ctx, meter, subject, deletedAt, reps)
	return res, err
}

// measureSearch times csv-cleaner's search of subject's deletion revision
// reps times, and fails unless every search finds deletedAt.
func (e *Env) measureSearch(ctx context.Context, meter cpuMeter, subject client.Object, deletedAt string, reps int) (RevisionSearchCost, error) {
	var out RevisionSearchCost
	head := &metav1.PartialObjectMetadataList{}
	head.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
	if err := e.Client.List(ctx, head, client.Limit(1)); err != nil {
		return out, err
	}
	out.ClusterRevision = head.ResourceVersion
	g := revision.Reader{Gatherer: instances.Gatherer{Live: e.Client, Cached: e.Client}}
	var took []time.Duration
	cpu, err := meter.during(func() error {
		for range reps {
			start := time.Now()
			found, err := g.Search(ctx, subject)
			if err != nil {
				return err
			}
			took = append(took, time.Since(start))
			if found.Revision != deletedAt {
				return fmt.Errorf("the search found revision %q (%s), the deletion was at %s", found.Revision, found.Why, deletedAt)
			}
			out.Lists = found.Lists
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	slices.Sort(took)
	out.Took, out.CPU = took[len(took)/2], CPU{APIServer: cpu.APIServer / float64(reps), Etcd: cpu.Etcd / float64(reps)}
	// Let the CSV go.
	base := subject.DeepCopyObject().(client.Object)
	subject.SetFinalizers(nil)
	return out, e.Client.Patch(ctx, subject, client.MergeFrom(base))
}

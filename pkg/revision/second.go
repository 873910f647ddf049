package revision

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// An operand created in the second of its owner's deletion may be either
// side of it (timestamps have whole seconds); a LIST at the deletion's
// revision (resourceVersionMatch=Exact) tells. docs/exact.md says when
// that holds.

// Outcomes of csv_cleaner_deletion_second_lookups_total.
const (
	secondExisted = "existed"
	secondAbsent  = "absent"
	secondUnknown = "unknown"
)

// Values of the revision label of csv_cleaner_deletion_second_lookups_total:
// how the deletion's revision was found.
const (
	revisionWatch  = "watch"
	revisionSearch = "search"
	revisionNone   = "none"
)

var deletionSecondLookups = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "csv_cleaner_deletion_second_lookups_total",
	Help: "Operands created in the second their uninstall began, by what the cluster as it was at the deletion's revision said of them: existed (deleted), absent (kept, created after the deletion) or unknown (kept, CreatedInDeletionSecond: no revision, or compacted); and by how that revision was found: watch (the deletion was seen to begin), search (found after the fact with Exact LISTs) or none.",
}, []string{"outcome", "revision"})

func init() { metrics.Registry.MustRegister(deletionSecondLookups) }

// Second answers, during one pass of an uninstall (or one plan),
// which operands created in the deletion's own second existed when it
// began. It checks once that the revision is the deletion's, and lists each
// kind's namespace at the revision at most once. Safe for the pass's
// concurrent kinds.
type Second struct {
	r Reader
	// subject is the CSV or the ClusterExtension whose deletion it is.
	subject  client.Object
	revision string
	// from is how revision was found (status.deletionRevisionFrom): as the
	// record says, Search once this pass found it, NotFound once a search
	// found none.
	from string

	mu sync.Mutex
	// usable is nil until the revision was checked; then whether it is the deletion's.
	usable *bool
	// listed holds, per kind and namespace, the UIDs there at the revision.
	listed map[string]map[types.UID]bool
}

// Second is the deletion second of subject (the CSV or the
// ClusterExtension being deleted), whose deletion began at revision ("" if
// unknown: it is searched for when an operand of the second needs it),
// found as from says (the record's status.deletionRevisionFrom), for one pass.
func (r Reader) Second(subject client.Object, revision, from string) *Second {
	return &Second{r: r, subject: subject, revision: revision, from: from}
}

// Found returns the revision and how it was found, as this pass leaves
// them: what a record keeps once a search has run.
func (d *Second) Found() (revision, from string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.revision, d.from
}

// source is the revision label of the lookups metric.
func (d *Second) source() string {
	switch {
	case d.revision == "":
		return revisionNone
	case d.from == cleanupv1alpha1.RevisionFromSearch:
		return revisionSearch
	}
	return revisionWatch // before deletionRevisionFrom, the watch was the only way
}

// PlanInstances plans a CRD's instances a page at a time, as the run
// deletes them and the plan prints them: the operands of the deletion's
// second are looked up at its revision (second) and decide.PlanOperands
// decides each page, which fn gets before the next page is read.
func (r Reader) PlanInstances(ctx context.Context, second *Second, s *decide.CRDScope, in decide.OperandInput, fn func(decide.OperandPlan) error) error {
	return r.ForEachPage(ctx, s, func(page []metav1.PartialObjectMetadata) error {
		atDeletion, err := second.resolve(ctx, s, in.DeletionTime, page)
		if err != nil {
			return err
		}
		in.Scope, in.Items, in.AtDeletion = *s, page, atDeletion
		return fn(decide.PlanOperands(in))
	})
}

// resolve returns, for the instances of page created in the deletion's
// second, whether each existed at the deletion's revision
// (decide.OperandInput.AtDeletion). It returns nil (each of them of unknown
// age) when there is no revision or the API server can no longer answer
// for it; an error only for a failed request.
func (d *Second) resolve(ctx context.Context, s *decide.CRDScope, deletion metav1.Time, page []metav1.PartialObjectMetadata) (map[types.UID]bool, error) {
	inSecond := decide.InDeletionSecond(page, deletion)
	if len(inSecond) == 0 {
		return nil, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	log := logr.FromContextOrDiscard(ctx)
	usable, err := d.check(ctx)
	if err != nil || !usable {
		deletionSecondLookups.WithLabelValues(secondUnknown, d.source()).Add(float64(len(inSecond)))
		return nil, err
	}
	out := make(map[types.UID]bool, len(inSecond))
	for _, obj := range inSecond {
		key := s.GVR.String() + "/" + obj.Namespace
		there, ok := d.listed[key]
		if !ok {
			there, err = d.r.existedAt(ctx, s, obj.Namespace, d.revision)
			if err != nil {
				return nil, err
			}
			if d.listed == nil {
				d.listed = map[string]map[types.UID]bool{}
			}
			d.listed[key] = there // nil: compacted meanwhile
		}
		if there == nil {
			deletionSecondLookups.WithLabelValues(secondUnknown, d.source()).Inc()
			continue
		}
		out[obj.UID] = there[obj.UID]
		outcome := secondAbsent
		if there[obj.UID] {
			outcome = secondExisted
		}
		deletionSecondLookups.WithLabelValues(outcome, d.source()).Inc()
		log.V(1).Info("Looked up an operand of the deletion's second at the deletion's revision", "kind", s.Kind,
			"object", klog.KObj(obj), "revision", d.revision, "existed", there[obj.UID])
	}
	return out, nil
}

// check tells once whether the revision is the deletion's, searching for
// it first when there is none; d.mu is held.
func (d *Second) check(ctx context.Context) (bool, error) {
	if d.usable == nil {
		ok, err := d.establish(ctx)
		if err != nil {
			return false, err
		}
		d.usable = &ok
	}
	return *d.usable, nil
}

// establish finds the deletion's revision after the fact when there is
// none (Search), or checks the one there is (StartsDeletion).
func (d *Second) establish(ctx context.Context) (bool, error) {
	log := logr.FromContextOrDiscard(ctx)
	if d.revision == "" {
		if d.from == cleanupv1alpha1.RevisionNotFound {
			return false, nil // searched for in an earlier pass: compaction only moves on
		}
		found, err := d.r.Search(ctx, d.subject)
		if err != nil {
			return false, err
		}
		if found.Revision == "" {
			d.from = cleanupv1alpha1.RevisionNotFound
			log.Info("Keeping the operands of the deletion's second: csv-cleaner did not see the deletion begin and cannot find its revision", "reason", found.Why, "lists", found.Lists)
			return false, nil
		}
		log.Info("Found the deletion's revision after the fact", "revision", found.Revision, "lists", found.Lists)
		d.revision, d.from = found.Revision, cleanupv1alpha1.RevisionFromSearch
		return true, nil // the search saw the subject live just before it
	}
	ok, why, err := d.r.StartsDeletion(ctx, d.subject, d.revision)
	if err != nil {
		return false, err
	}
	if !ok {
		log.Info("Keeping the operands of the deletion's second: their age cannot be told", "reason", why)
	}
	return ok, nil
}

// StartsDeletion reports whether revision is the one at which the
// subject's deletion began: the subject then had a deletionTimestamp (the
// watch showed it) and, at the revision before, had none. A watch that was
// cut and listed again shows a later version as the first one deleting,
// whose revision this check refuses. why says, when ok is false, why the
// revision cannot tell (none, not a number, compacted, not the first).
func (r Reader) StartsDeletion(ctx context.Context, subject client.Object, revision string) (ok bool, why string, err error) {
	if revision == "" {
		return false, "no deletion revision: csv-cleaner did not see the deletion begin", nil
	}
	rev, perr := strconv.ParseUint(revision, 10, 64)
	if perr != nil || rev < 2 {
		return false, fmt.Sprintf("the deletion revision %q is not an etcd revision", revision), nil
	}
	st, err := r.stateAt(ctx, subject, rev-1)
	switch {
	case err != nil:
		return false, "", err
	case st == atCompacted:
		return false, fmt.Sprintf("the API server cannot list at revision %d any more", rev-1), nil
	case st == atLive:
		return true, "", nil
	}
	return false, fmt.Sprintf("revision %s is not where the deletion began (the watch missed it)", revision), nil
}

// existedAt returns the UIDs of the scope's instances in namespace as they
// were at revision, listed in pages; nil when the API server can no longer
// answer for that revision (compacted).
func (r Reader) existedAt(ctx context.Context, s *decide.CRDScope, namespace, revision string) (map[types.UID]bool, error) {
	uids := map[types.UID]bool{}
	exact := &metav1.ListOptions{ResourceVersion: revision, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	for next := ""; ; {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(s.GVR.GroupVersion().WithKind(s.CRD.Spec.Names.Kind + "List"))
		opts := &client.ListOptions{Namespace: namespace, Limit: objects.PageSize, Continue: next}
		if next == "" { // a continue token carries the revision; the API server refuses both
			opts.Raw = exact
		}
		err := r.Live.List(ctx, list, opts)
		if unanswerable(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s in %q at revision %s: %w", s.GVR.GroupResource(), namespace, revision, err)
		}
		for _, o := range list.Items {
			uids[o.UID] = true
		}
		if next = list.GetContinue(); next == "" {
			return uids, nil
		}
	}
}

// unanswerable is an error of a LIST at an exact revision that no retry
// mends: the revision was compacted (410), or the API server does not take
// it (a malformed or future revision).
func unanswerable(err error) bool {
	return err != nil && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err) || apierrors.IsBadRequest(err) ||
		apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge))
}

package revision

import (
	"context"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// What an Exact LIST of the subject at one revision shows of it.
type revisionState int

const (
	// atCompacted: the API server can no longer answer for the revision.
	atCompacted revisionState = iota
	// atAbsent: no object of the subject's name and UID then (not created yet).
	atAbsent
	// atLive: the subject, without a deletionTimestamp.
	atLive
	// atDeleting: the subject, with a deletionTimestamp.
	atDeleting
)

// Found is what Search found.
type Found struct {
	// Revision is the deletion's revision; "" when it could not be found.
	Revision string
	// Why says, when Revision is "", why not.
	Why string
	// Lists is how many Exact LISTs the search sent.
	Lists int
}

// Search finds the first revision at which subject (its
// UID) carries a deletionTimestamp, by a binary search of Exact LISTs of it
// by name, for a csv-cleaner that was down when the deletion began. Revision
// is "" when the revisions before it were compacted. docs/exact.md says why
// the search is sound.
func (r Reader) Search(ctx context.Context, subject client.Object) (Found, error) {
	hi, err := strconv.ParseUint(subject.GetResourceVersion(), 10, 64)
	if err != nil || hi < 2 {
		return Found{Why: fmt.Sprintf("its resourceVersion %q is not an etcd revision", subject.GetResourceVersion())}, nil
	}
	return searchFirstDeleting(hi, func(rev uint64) (revisionState, error) { return r.stateAt(ctx, subject, rev) })
}

// searchFirstDeleting is the search of Search over the
// states at tells, from revision hi (the subject's own) down.
func searchFirstDeleting(hi uint64, at func(uint64) (revisionState, error)) (Found, error) {
	var out Found
	probe := func(rev uint64) (revisionState, error) {
		out.Lists++
		return at(rev)
	}
	// The subject as read carries a deletionTimestamp at its own revision,
	// unless the deletion is only a plan's hypothesis.
	switch st, err := probe(hi); {
	case err != nil:
		return out, err
	case st == atCompacted:
		out.Why = fmt.Sprintf("the revisions up to its own, %d, were compacted: the deletion began earlier", hi)
		return out, nil
	case st != atDeleting:
		out.Why = fmt.Sprintf("it is not being deleted at its own revision %d", hi)
		return out, nil
	}
	// Invariant: deleting at hi, not at lo (revision 0 holds nothing).
	lo, loState := uint64(0), atAbsent
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		st, err := probe(mid)
		if err != nil {
			return out, err
		}
		if st == atDeleting {
			hi = mid
		} else {
			lo, loState = mid, st
		}
	}
	switch loState {
	case atLive:
		out.Revision = strconv.FormatUint(hi, 10)
	case atCompacted:
		out.Why = fmt.Sprintf("the revisions before %d, the first the API server still serves, were compacted: the deletion began earlier", hi)
	default:
		out.Why = fmt.Sprintf("it was not there at revision %d, just before it was first seen deleting", lo)
	}
	return out, nil
}

// stateAt lists the subject by name, metadata only, as it was at revision rev.
func (r Reader) stateAt(ctx context.Context, subject client.Object, rev uint64) (revisionState, error) {
	gvk, err := apiutil.GVKForObject(subject, scheme)
	if err != nil {
		return atAbsent, fmt.Errorf("the kind of %s: %w", klog.KObj(subject), err)
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	err = r.Live.List(ctx, list, &client.ListOptions{
		Namespace:     subject.GetNamespace(),
		FieldSelector: fields.OneTermEqualSelector("metadata.name", subject.GetName()),
		Raw:           &metav1.ListOptions{ResourceVersion: strconv.FormatUint(rev, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact},
	})
	if unanswerable(err) {
		return atCompacted, nil
	}
	if err != nil {
		return atAbsent, fmt.Errorf("reading %s at revision %d: %w", klog.KObj(subject), rev, err)
	}
	for _, o := range list.Items {
		if o.UID != subject.GetUID() {
			continue
		}
		if o.DeletionTimestamp != nil {
			return atDeleting, nil
		}
		return atLive, nil
	}
	return atAbsent, nil
}

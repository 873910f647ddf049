package dryrun

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dependents"
	"github.com/csv-cleaner/csv-cleaner/pkg/instances"
	"github.com/csv-cleaner/csv-cleaner/pkg/refusal"
	"github.com/csv-cleaner/csv-cleaner/pkg/revision"
)

// Instances is what a plan's AddInstances decides: the instances of the
// scopes' CRDs, as the run lists and decides them.
type Instances struct {
	// Subject is the CSV or the ClusterExtension; its record holds the deletion's revision.
	Subject client.Object
	Scopes  []decide.CRDScope
	Decide  decide.OperandInput
	// Settings are the policy's, for the conversion step (decide.ConversionFate).
	Settings decide.Settings
	// OperatorUnavailable says why the operator is unavailable, nil while it
	// runs; read only when a kind's conversion webhook fails.
	OperatorUnavailable func(context.Context) (*decide.Problem, error)
	// Depth PlanKinds lists no instance: the plan keeps the kinds whose
	// instances the uninstall deletes (those not kept whole), and where.
	Depth PlanDepth
}

// Unread is a kind whose instances the plan could not read: why, and what
// the run does about it.
type Unread struct {
	Kind string `json:"kind"`
	// Reason is the refusal's (ConversionFailed, Forbidden, AdmissionRefused), or ReadFailed.
	Reason string `json:"reason"`
	// Message says what the run does with the kind, then the API server's message.
	Message string `json:"message"`
}

// ReadFailed is the reason of an Unread kind whose listing failed without a refusal.
const ReadFailed = "ReadFailed"

// AddInstances adds the scopes' instances to the plan a page at a time, as
// the run lists and decides them. A kind it cannot read is a row of Unread,
// never an empty plan. It returns the kinds of which it keeps some instance
// (an unread kind counts); at PlanKinds it lists nothing.
func (d *DryRun) AddInstances(ctx context.Context, g instances.Gatherer, in Instances) (map[string]bool, error) {
	d.targets = in.Decide.Targets
	for _, s := range in.Scopes {
		if s.CRD != nil && s.KeepReason == "" && in.Decide.Orphan == "" {
			d.kinds = append(d.kinds, s)
		}
	}
	if in.Depth == PlanKinds {
		return map[string]bool{}, nil // what is kept is not known: the CRDs' fate is planned as if nothing were
	}
	rr := revision.Reader{Gatherer: g}
	rev, from, err := rr.Recorded(ctx, in.Subject)
	if err != nil {
		return nil, err
	}
	if in.Decide.Orphan == "" && d.Verdict == decide.VerdictUninstall {
		d.foresight = &foresight{scopes: append([]decide.CRDScope(nil), in.Scopes...), onTimeout: in.Decide.Timeout.OnTimeout, converting: map[string]bool{}}
	}
	r := kindReader{r: rr, in: in, second: rr.Second(in.Subject, rev, from), operator: refusal.Operator{Unavailable: in.OperatorUnavailable}}
	keptKinds := map[string]bool{}
	for i := range in.Scopes {
		s := &in.Scopes[i]
		if s.CRD == nil {
			continue
		}
		items, kept, origins, err := r.read(ctx, s)
		if err == nil {
			d.Items, d.origins = append(d.Items, items...), append(d.origins, origins...)
			keptKinds[s.Kind] = kept
			continue
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		if err := d.unreadable(ctx, &r, i, err); err != nil {
			return nil, err
		}
		keptKinds[s.Kind] = true // what is left of it is not known: the CRD stays as far as the plan can tell
	}
	d.settle()
	return keptKinds, nil
}

// kindReader reads one plan's kinds.
type kindReader struct {
	r      revision.Reader
	in     Instances
	second *revision.Second
	// operator is the operator's unavailability, read once when first needed.
	operator refusal.Operator
}

// read plans the instances of one kind at the scope's version, with the
// origins of those it deletes; they are returned only when every page was
// read.
func (r *kindReader) read(ctx context.Context, s *decide.CRDScope) (items []decide.Item, kept bool, origins []decide.Origin, _ error) {
	kind, group, _ := strings.Cut(s.Kind, ".")
	err := r.r.PlanInstances(ctx, r.second, s, r.in.Decide, func(decided decide.OperandPlan) error {
		items = append(items, decided.Items...)
		kept = kept || len(decided.KeptRefs) > 0
		for i := range decided.Delete {
			held := decide.Held{Group: group, Kind: kind, Resource: s.GVR.Resource}
			o := decide.OriginOf(dependents.NodeOf(held, &decided.Delete[i]))
			o.Labels = decided.Delete[i].Labels
			origins = append(origins, o)
		}
		return nil
	})
	return items, kept, origins, err
}

// unreadable plans a kind whose listing failed with listErr as the run
// would meet it: a failing conversion webhook turned off (an Update item)
// or blocking, the instances read at a stored version; another refusal
// blocks; the caller's own lack of rights only leaves the kind unread
// (docs/plan.md).
func (d *DryRun) unreadable(ctx context.Context, r *kindReader, i int, listErr error) error {
	s := &r.in.Scopes[i]
	why, refused := refusal.Classify(listErr)
	unread := Unread{Kind: s.Kind, Reason: ReadFailed, Message: "the plan could not list them: " + listErr.Error()}
	if refused {
		unread.Reason = why.Reason
	}
	orphanedOnTimeout := r.in.Decide.Timeout.Passed && r.in.Settings.OnTimeout == cleanupv1alpha1.TimeoutOrphan
	blocks := refused && why.Reason != cleanupv1alpha1.BlockedForbidden && r.in.Decide.Orphan == "" && !orphanedOnTimeout
	switch {
	case refused && why.Reason == cleanupv1alpha1.BlockedForbidden:
		unread.Message = "the plan's caller may not list them (csv-cleaner's own rights are checked apart): " + listErr.Error()
	case r.in.Decide.Orphan != "":
		unread.Message = fmt.Sprintf("every instance is kept (%s); the plan could not list them: %v", r.in.Decide.Orphan, listErr)
	case blocks && why.Reason == cleanupv1alpha1.BlockedConversionFailed:
		gone, err := r.operator.Gone(ctx)
		if err != nil {
			return err
		}
		if it, ok := decide.ConversionFate(*s, r.in.Settings, gone != nil); ok {
			d.Items = append(d.Items, it)
			if d.foresight != nil {
				d.foresight.converting[s.Name] = true
			}
			blocks = false
			unread.Message = "they cannot be read before the uninstall has set the CRD's conversion to None, and are decided then: " + listErr.Error()
		}
	}
	if blocks {
		meta := refusal.Object{Refusal: why}
		p := refusal.Problem([]refusal.Operand{{Kind: s.Kind, Object: meta}})
		d.problems = append(d.problems, *p)
		unread.Message = p.Message
	}
	if !refused || why.Reason != cleanupv1alpha1.BlockedConversionFailed {
		d.Unread = append(d.Unread, unread)
		return nil
	}
	// Read at a version the objects are stored at: no conversion is needed
	// there, and the metadata the decisions read is the same at every version.
	for _, v := range decide.StoredVersions(*s) {
		at := *s
		at.GVR.Version = v
		items, _, origins, err := r.read(ctx, &at)
		if err != nil {
			continue
		}
		d.Items, d.origins = append(d.Items, items...), append(d.origins, origins...)
		if d.foresight != nil {
			d.foresight.scopes[i].GVR.Version = v // the dry-run DELETE is sent where the objects can be read
		}
		if !blocks {
			return nil // the run turns the conversion off and decides them as listed
		}
		d.Notes = append(d.Notes, fmt.Sprintf("the instances of %s were read at version %s, where they are stored; the uninstall deletes them as listed once it can read them", s.Kind, v))
		return nil
	}
	d.Unread = append(d.Unread, unread)
	return nil
}

// settle makes the verdict say what the plan found that the run meets: a
// kind the run would be refused blocks it; a kind the plan could not read
// leaves it Incomplete. Called again by Foresee with what it foresaw.
func (d *DryRun) settle() {
	if d.verdictMessage == "" {
		d.verdictMessage = d.Message
	}
	if d.Verdict != decide.VerdictUninstall && d.Verdict != decide.VerdictIncomplete && d.Verdict != decide.VerdictBlocked {
		return
	}
	switch {
	case len(d.problems) > 0:
		joined := decide.JoinProblems(d.problems)
		then := "the other items would be deleted and the uninstall would stay Blocked on these"
		if d.accessDenied {
			then = "nothing would be deleted until then; the items are what the uninstall would do once it may"
		}
		d.Verdict, d.Reason, d.Message = decide.VerdictBlocked, joined.Reason, joined.Message+"; "+then
	case len(d.Unread) > 0:
		d.Verdict, d.Reason = decide.VerdictIncomplete, ""
		d.Message = fmt.Sprintf("%s; the plan could not read %s (listed as unread): what the uninstall does with their instances is not shown", d.verdictMessage, kinds(len(d.Unread)))
	}
}

// kinds is "1 kind" or "n kinds".
func kinds(n int) string {
	if n == 1 {
		return "1 kind"
	}
	return fmt.Sprintf("%d kinds", n)
}

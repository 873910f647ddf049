package cleanup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/refusal"
	"github.com/csv-cleaner/csv-cleaner/pkg/revision"
	"github.com/go-logr/logr"
)

// deleteInstances is the part of the operand step that the uninstalls of a
// CSV and of a ClusterExtension share: for the CRDs in u.scopes, with
// targets, it checks csv-cleaner's rights (a missing one blocks before
// anything is deleted), runs a pass and decides what it leaves.
func (e *Engine) deleteInstances(ctx context.Context, u *Uninstall, targets decide.NamespaceSet) (bool, error) {
	access, err := e.checkOperandAccess(ctx, u.scopes, u.settings.OnTimeout)
	if err != nil || access.Problem != nil {
		return false, errors.Join(err, decide.AsError(access.Problem))
	}
	round := &operandRound{e: e, u: u, second: revision.Reader{Gatherer: e.gather()}.Second(u.subject, u.rec.st.DeletionRevision, u.rec.st.DeletionRevisionFrom),
		operator: refusal.Operator{Unavailable: u.operatorUnavailable}}
	in := decide.OperandInput{Targets: targets, DeletionTime: metav1.NewTime(u.deletion), Timeout: u.timeout(), Backed: u.backed()}
	err = round.run(ctx, u.scopes, in, access)
	// A revision searched for in this pass is kept, found or not: the next
	// passes use it, or no longer search (compaction only moves on).
	u.rec.st.DeletionRevision, u.rec.st.DeletionRevisionFrom = round.second.Found()
	if err != nil {
		return false, err
	}
	u.rec.setBlocking(round.blocking)
	switch {
	case round.conversionDisabled:
		return false, nil // listed again on the next pass
	case len(round.waiting) == 0:
		return true, nil
	}
	return e.settleRound(ctx, u, round)
}

// countKept records every instance of the owned CRDs as kept for reason
// (decide.GateOperands' orphan), as decide.PlanOperands decides it.
func (e *Engine) countKept(ctx context.Context, u *Uninstall, reason string) error {
	for i := range u.scopes {
		s := &u.scopes[i]
		if s.CRD == nil {
			continue
		}
		kept := map[string]int{reason: 0}
		err := e.gather().ForEachPage(ctx, s, func(page []metav1.PartialObjectMetadata) error {
			decided := decide.PlanOperands(decide.OperandInput{Scope: *s, Orphan: reason, Items: page})
			kept[reason] += decided.Kept[reason]
			u.rec.keep(decided.KeptRefs...)
			return nil
		})
		if why, refused := refusal.Classify(err); refused {
			// Nothing of the kind is deleted: a refusal to list them (a
			// missing right, a conversion webhook that fails) blocks nothing.
			logr.FromContextOrDiscard(ctx).Info("Not counting the kept instances of a kind the API server refuses to list", "kind", s.Kind, "reason", why.Reason)
			u.rec.count(s.Kind, 0, 0, map[string]int{reason: 0, cleanupv1alpha1.NoteNotListed: 0})
			continue
		}
		if err != nil {
			return err
		}
		u.rec.count(s.Kind, 0, 0, kept)
	}
	return nil
}

// deleteRefusingWebhooks hands the owner, while its operator is
// unavailable, what refused csv-cleaner's deletes: with webhooks: Delete,
// its own webhook configurations that hold one of those webhooks go now
// rather than at the uninstall's end (Hooks.DeleteRefusingWebhooks). It
// returns how many went.
func (u *Uninstall) deleteRefusingWebhooks(ctx context.Context, refused []refusal.Operand) (int, error) {
	if u.settings.Webhooks != cleanupv1alpha1.Delete {
		return 0, nil
	}
	var sources []string
	for _, f := range refused {
		if f.Refusal.Reason == cleanupv1alpha1.BlockedAdmissionRefused && f.Refusal.Source != "" && !slices.Contains(sources, f.Refusal.Source) {
			sources = append(sources, f.Refusal.Source)
		}
	}
	if len(sources) == 0 {
		return 0, nil
	}
	return u.owner.DeleteRefusingWebhooks(ctx, sources)
}

// kindsListed bounds the owned CRDs whose instances one uninstall lists at
// once: one, as a bare client would, the next listed as soon as the last
// page of the one before is planned, while its deletes finish. Its memory
// stays a few pages whatever the number of kinds, and kube-apiserver serves
// one kind's pages at a time (docs/performance.md).
const kindsListed = 1

// operandRound is one pass over the owned CRDs' operands.
type operandRound struct {
	e *Engine
	u *Uninstall
	// second tells the age of the operands created in the deletion's second.
	second *revision.Second
	// waiting are the kinds with operands left: held by finalizers, or refused.
	waiting  []waitingKind
	blocking []cleanupv1alpha1.ObjectRef
	refused  []refusal.Operand
	// conversionDisabled: a CRD's dead conversion webhook was turned off.
	conversionDisabled bool
	// operator is whether the operator is unavailable, read once a pass when first needed.
	operator refusal.Operator
}

// waitingKind is what a pass left of one kind.
type waitingKind struct {
	scope *decide.CRDScope
	pass  operandPass
	// refused are what the API server refused: objects, or the kind's list.
	refused []refusal.Object
}

// run deletes what the plan says of each kind and records what it did.
// The kinds are listed one after another (kindsListed) and deleted on
// DeleteWorkers slots in all, so that no kind waits for the last deletes of
// another; what each came to is then recorded in the scopes' order.
func (o *operandRound) run(ctx context.Context, scopes []decide.CRDScope, in decide.OperandInput, access refusal.Access) error {
	e, u := o.e, o.u
	type result struct {
		pass operandPass
		err  error
	}
	results := make([]result, len(scopes))
	slots := e.newSlots()
	listing := make(chan struct{}, kindsListed)
	var wg sync.WaitGroup
	for i := range scopes {
		if s := &scopes[i]; s.CRD != nil && !access.Unlisted[s.Name] {
			wg.Go(func() {
				results[i].pass, results[i].err = e.deleteOperands(ctx, s, in, o.second, slots, listing)
			})
		}
	}
	wg.Wait()
	var failed []error
	for i := range scopes {
		s := &scopes[i]
		switch {
		case s.CRD == nil:
			u.rec.count(s.Kind, 0, 0, map[string]int{cleanupv1alpha1.NoteCRDNotFound: 0})
			continue
		case access.Unlisted[s.Name]:
			u.rec.count(s.Kind, 0, 0, map[string]int{s.KeepReason: 0, cleanupv1alpha1.NoteNotListed: 0})
			continue
		}
		pass, err := results[i].pass, results[i].err
		if why, ok := refusal.Classify(err); ok {
			if err := o.unlistable(ctx, s, why); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			// What a failed pass deleted before it failed is counted all the
			// same (the record is written on the way out): the next pass no
			// longer finds it.
			failed = append(failed, fmt.Errorf("%s: %w", s.Kind, err))
		}
		o.count(s, pass)
	}
	return errors.Join(failed...)
}

// unlistable deals with a kind the API server refused to list (why): its
// conversion is turned off where the decisions allow (the next pass lists
// it again); else nothing of it is deleted, it is noted and not counted,
// and the other kinds go on.
func (o *operandRound) unlistable(ctx context.Context, s *decide.CRDScope, why refusal.Refusal) error {
	e, u := o.e, o.u
	if why.Reason == cleanupv1alpha1.BlockedConversionFailed && decide.MayDisableConversion(*s, u.settings) {
		gone, err := o.operator.Gone(ctx)
		if err != nil {
			return err
		}
		if _, disable := decide.ConversionFate(*s, u.settings, gone != nil); disable {
			changed, err := e.disableConversion(ctx, u, s, why)
			if err != nil || changed {
				o.conversionDisabled = o.conversionDisabled || changed
				return err
			}
		}
	}
	if why.Reason == cleanupv1alpha1.BlockedForbidden {
		why.Message = refusal.ForbiddenOperands(*s, []string{"list"}, "").Message
	}
	w := waitingKind{scope: s, refused: []refusal.Object{{Refusal: why}}}
	o.waiting = append(o.waiting, w)
	o.refused = append(o.refused, refusal.Operand{Kind: s.Kind, Object: w.refused[0]})
	u.rec.count(s.Kind, 0, 0, map[string]int{why.Reason: 0, cleanupv1alpha1.NoteNotListed: 0})
	o.blocking = append(o.blocking, cleanupv1alpha1.ObjectRef{Kind: s.Kind, Reason: why.Reason})
	return nil
}

// count records what a kind's pass deleted, kept and left, even when the
// API server refused some deletes: the record shows every step taken.
func (o *operandRound) count(s *decide.CRDScope, pass operandPass) {
	u := o.u
	if pass.deleted > 0 {
		o.e.Event(u.subject, corev1.EventTypeNormal, "OperandsDeleted", "Delete", "Deleted %d %s objects", pass.deleted, s.Kind)
	}
	u.rec.count(s.Kind, pass.found, len(pass.remaining)+len(pass.refused)+pass.failed, pass.kept)
	u.rec.keep(pass.keptRefs...)
	for _, f := range pass.refused {
		if f.Refusal.Reason == cleanupv1alpha1.BlockedForbidden {
			f.Refusal.Message = refusal.ForbiddenOperands(*s, []string{"delete"}, f.Obj.Namespace+"/"+f.Obj.Name).Message
		}
		o.refused = append(o.refused, refusal.Operand{Kind: s.Kind, Object: f})
		o.blocking = append(o.blocking, Refs(s.Kind, []metav1.PartialObjectMetadata{f.Obj}, f.Refusal.Reason)...)
	}
	if len(pass.remaining) > 0 || len(pass.refused) > 0 {
		o.waiting = append(o.waiting, waitingKind{scope: s, pass: pass, refused: pass.refused})
		o.blocking = append(o.blocking, Refs(s.Kind, pass.remaining, "Finalizers")...)
	}
}

// settleRound decides what a pass that left operands comes to: the
// operator's own refusing webhooks go; before operandTimeout the uninstall
// waits, Blocked on a refusal or an unavailable operator; past it,
// onTimeout applies to stuck and refused operands alike.
func (e *Engine) settleRound(ctx context.Context, u *Uninstall, o *operandRound) (bool, error) {
	unavailable, err := o.operator.Gone(ctx)
	if err != nil {
		return false, err
	}
	if len(o.refused) > 0 && unavailable != nil {
		// The operator's own webhooks, which nobody serves any more, never block its uninstall for good.
		deleted, err := u.deleteRefusingWebhooks(ctx, o.refused)
		if err != nil || deleted > 0 {
			return false, err // the next pass deletes again
		}
	}
	refusedProblem := refusal.Problem(o.refused)
	timeout := u.timeout()
	if unavailable != nil {
		unavailable.Message = fmt.Sprintf("%d operands wait for finalizers and %s; %s", len(o.blocking), unavailable.Message, timeout.Then())
	}
	if !timeout.Passed {
		switch {
		case refusedProblem != nil:
			return false, refusedProblem
		case unavailable != nil:
			return false, unavailable
		}
		return false, nil
	}

	switch u.settings.OnTimeout {
	case cleanupv1alpha1.TimeoutRemoveFinalizers:
		return false, e.removeFinalizersOnTimeout(ctx, u, o.waiting, refusedProblem)
	case cleanupv1alpha1.TimeoutOrphan:
		e.orphanOnTimeout(u, o.waiting)
		return true, nil
	default:
		switch {
		case refusedProblem != nil:
			return false, refusedProblem
		case unavailable != nil:
			return false, unavailable
		}
		first := o.blocking[0]
		return false, &decide.Problem{Reason: cleanupv1alpha1.BlockedOperandsRemaining, Object: first.Kind + " " + first.Namespace + "/" + first.Name,
			Message: fmt.Sprintf("%d operands still exist after operandTimeout %s, held by finalizers that nobody removes; see status.blocking, or set onTimeout to RemoveFinalizers or Orphan", len(o.blocking), u.settings.OperandTimeout)}
	}
}

// removeFinalizersOnTimeout strips the finalizers of the operands still
// waiting, an Event on each; what the API server refuses to delete stays,
// and the uninstall stays Blocked on it.
func (e *Engine) removeFinalizersOnTimeout(ctx context.Context, u *Uninstall, waiting []waitingKind, refusedProblem *decide.Problem) error {
	for _, w := range waiting {
		if len(w.pass.remaining) == 0 {
			continue
		}
		gvk := w.scope.GVR.GroupVersion().WithKind(w.scope.CRD.Spec.Names.Kind)
		stripped, err := e.stripFinalizers(ctx, gvk, w.pass.remaining)
		if why, ok := refusal.Classify(err); ok {
			err = &decide.Problem{Reason: why.Reason, Object: w.scope.Kind,
				Message: fmt.Sprintf("onTimeout RemoveFinalizers: the API server refused to remove the finalizers of %s objects: %s; %s", w.scope.Kind, why.Message, why.Advice())}
		}
		for i := range stripped {
			obj := stripped[i].DeepCopy()
			obj.SetGroupVersionKind(gvk)
			e.Event(obj, corev1.EventTypeWarning, "FinalizersRemoved", "RemoveFinalizers",
				"csv-cleaner removed finalizers %v after operandTimeout %s of the uninstall of %s", stripped[i].Finalizers, u.settings.OperandTimeout, u.title)
		}
		if err != nil {
			return err
		}
	}
	if refusedProblem != nil {
		refusedProblem.Message += "; onTimeout RemoveFinalizers removed the finalizers it could, but cannot delete what the API server refuses to delete"
		return refusedProblem
	}
	return nil
}

// orphanOnTimeout keeps the operands still waiting: stuck ones counted as
// TimedOut, refused ones under the reason the API server gave and named in
// an Event.
func (e *Engine) orphanOnTimeout(u *Uninstall, waiting []waitingKind) {
	var keptRefs []cleanupv1alpha1.ObjectRef
	for _, w := range waiting {
		kept := w.pass.kept
		if kept == nil {
			kept = map[string]int{}
		}
		kept[cleanupv1alpha1.KeepTimedOut] += len(w.pass.remaining)
		u.rec.keep(Refs(w.scope.Kind, w.pass.remaining, cleanupv1alpha1.KeepTimedOut)...)
		for _, f := range w.refused {
			if f.Obj.Name == "" { // the kind could not be listed: noted, not counted
				kept[f.Refusal.Reason] += 0
				kept[cleanupv1alpha1.NoteNotListed] += 0
				continue
			}
			kept[f.Refusal.Reason]++
			keptRefs = append(keptRefs, Refs(w.scope.Kind, []metav1.PartialObjectMetadata{f.Obj}, f.Refusal.Reason)...)
		}
		u.rec.count(w.scope.Kind, w.pass.found, 0, kept)
	}
	u.rec.keep(keptRefs...)
	for _, ref := range keptRefs {
		e.Event(u.subject, corev1.EventTypeWarning, "OperandKept", "Orphan",
			"Kept %s %s after operandTimeout %s (onTimeout Orphan): the API server refused to delete it (%s)", ref.Kind, refusal.Path(ref.Namespace, ref.Name), u.settings.OperandTimeout, ref.Reason)
	}
	u.rec.setBlocking(nil)
}

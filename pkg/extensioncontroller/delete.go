package extensioncontroller

import (
	"context"
	"errors"
	"fmt"
	"strings"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide/olmv1"
)

// reconcileDelete is a deleting extension's branch: one csv-cleaner
// released already has its record completed; one it holds, read live, has
// one pass of its uninstall run by the engine (cleanup.Engine.Uninstall).
func (r *Reconciler) reconcileDelete(ctx context.Context, cached *metav1.PartialObjectMetadata, policy *cleanupv1alpha1.CleanupPolicy) (ctrl.Result, error) {
	if !r.Finalizers.HeldBy(cached.Finalizers) {
		// Released, and held by others' finalizers: a record whose release
		// succeeded without its reply says Completed.
		return ctrl.Result{}, r.FinishRelease(ctx, cleanup.Extensions, client.ObjectKeyFromObject(cached), cached)
	}
	ext := &ocv1.ClusterExtension{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cached), ext); err != nil {
		return ctrl.Result{}, cleanup.InStep("read", client.IgnoreNotFound(err))
	}
	if !r.Finalizers.HeldBy(ext.Finalizers) || ext.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	return r.Uninstall(ctx, &pass{owner: owner{r: r, ext: ext}}, policy)
}

// pass is one pass of an extension's uninstall: what the engine asks of the extension's side.
type pass struct {
	owner
	// in is what the decisions read, gathered by Read (or why not, readErr).
	in      inputs
	readErr error
	targets decide.NamespaceSet
	// targetsProblem says why the targets cannot be known.
	targetsProblem *decide.Problem
	// crds is what the CRD step came to.
	crds crdOutcome
}

var _ cleanup.Pass = (*pass)(nil)

// Read gathers what the decisions read; a failure matters only to an
// uninstall (Classify returns it), not to a deletion let go at once.
func (p *pass) Read(ctx context.Context) error {
	p.in, p.readErr = p.r.gather(ctx, p.ext)
	return nil
}

// Classify reads the cascade from the extension's finalizers (the record
// keeps how the deletion began) and says, from what Read gathered, what the
// uninstall is about to do.
func (p *pass) Classify(_ context.Context, u *cleanup.Uninstall) (cleanup.Verdict, error) {
	verdict := olmv1.ClassifyExtension(p.ext.Finalizers)
	keepCascade(u, verdict.Cascade)
	if verdict.SkipReason != "" {
		return cleanup.Verdict{SkipReason: verdict.SkipReason, Message: verdict.Message}, nil
	}
	if p.readErr != nil {
		return cleanup.Verdict{}, p.readErr
	}
	p.unavailable = p.r.operatorUnavailable(p.ext, p.in.sets)
	p.targets, p.targetsProblem = olmv1.ExtensionTargets(p.ext, u.Settings())
	start := cleanup.Start{Why: verdict.Message, About: aboutToDo(p.in.scopes, p.targets, u.Settings())}
	if verdict.Cascade == olmv1.CascadeForeground {
		start.WarnReason, start.Warning = "ForegroundCascade", verdict.Message
	}
	return cleanup.Verdict{Start: start}, nil
}

// Steps are the instances of the extension's CRDs, then the CRDs' fate.
func (p *pass) Steps(x *cleanup.Uninstall) []cleanup.Step {
	// A CRD already being deleted (--cascade=foreground) stays in scope: its
	// instances are still there, held by finalizers, until they are gone.
	x.Scopes(p.in.scopes)
	// A kind whose CRD is gone since an earlier pass has no instance left.
	x.KindsGone(p.in.crdKinds)
	// The CRDs being deleted count from the first pass that sees them: the
	// CRD step comes only once their instances are gone, and they may be
	// gone with them.
	countTerminating(x, p.in.scopes)
	return []cleanup.Step{
		{Name: "operands", Run: func(ctx context.Context) (bool, error) {
			done, err := p.r.operandStep(ctx, x, p.in, p.targets, p.targetsProblem, x.Settings())
			return done, foregroundNote(cascadeOf(x), err)
		}},
		{Name: "CRDs", Run: func(ctx context.Context) (done bool, err error) {
			p.crds, err = p.r.crdStep(ctx, x, p.in, x.Settings())
			return p.crds.done, err
		}},
	}
}

// Released says what the extension's release does.
func (p *pass) Released() (releasing, completed string) {
	return "Everything the policy asked for is done; removing csv-cleaner's finalizer from the ClusterExtension, after which the garbage collector removes what OLM v1 applied",
		"Everything the policy asked for is done; the ClusterExtension is released" + p.crds.held()
}

// keepCascade keeps in the record how the extension is being deleted: the
// garbage collector takes the cascade's finalizer away once it is done
// with the dependents, so the record keeps how the deletion began.
func keepCascade(u *cleanup.Uninstall, c olmv1.Cascade) {
	if rec, ok := u.RecordObject().(*cleanupv1alpha1.ExtensionCleanup); ok && (rec.Status.Cascade == "" || c != olmv1.CascadeBackground) {
		rec.Status.Cascade = string(c)
	}
}

// cascadeOf is how the extension is being deleted, as the record keeps it
// from the deletion's start.
func cascadeOf(u *cleanup.Uninstall) olmv1.Cascade {
	if rec, ok := u.RecordObject().(*cleanupv1alpha1.ExtensionCleanup); ok {
		return olmv1.Cascade(rec.Status.Cascade)
	}
	return olmv1.CascadeBackground
}

// foregroundNote adds to what blocks a foreground cascade that the CRDs
// and the extension wait as long as it lasts.
func foregroundNote(c olmv1.Cascade, err error) error {
	var p *decide.Problem
	if c != olmv1.CascadeForeground || !errors.As(err, &p) {
		return err
	}
	q := *p
	q.Message += "; the garbage collector is deleting their CRDs (--cascade=foreground): the CRDs and the ClusterExtension stay until these are gone"
	return &q
}

// operandStep deletes the instances of the extension's CRDs in its targets
// (or keeps them all, operands: Orphan), with the CSVs' operand machinery.
// A CRD whose owner is in doubt, or targets csv-cleaner cannot read, block
// it before anything is deleted.
func (r *Reconciler) operandStep(ctx context.Context, x *cleanup.Uninstall, in inputs, targets decide.NamespaceSet, targetsProblem *decide.Problem, s decide.Settings) (bool, error) {
	switch {
	case len(in.problems) > 0:
		p := in.problems[0]
		return false, &p
	case s.Operands == cleanupv1alpha1.Orphan:
		return true, x.KeepInstances(ctx, cleanupv1alpha1.KeepPolicyOrphan)
	case targetsProblem != nil:
		return false, targetsProblem
	}
	return x.DeleteInstances(ctx, targets)
}

// aboutToDo says, for a person, what the uninstall does.
func aboutToDo(scopes []decide.CRDScope, targets decide.NamespaceSet, s decide.Settings) string {
	names := make([]string, 0, len(scopes))
	for _, sc := range scopes {
		names = append(names, sc.Name)
	}
	where := "in every namespace"
	if !targets.All() {
		where = "in its watch namespace"
	}
	operands := "deleting the custom resources " + where
	if s.Operands == cleanupv1alpha1.Orphan {
		operands = "keeping every custom resource (" + cleanupv1alpha1.KeepPolicyOrphan + ")"
	}
	crds := "detaching them from the ClusterExtension, so that the garbage collector keeps them"
	if s.CRDs == cleanupv1alpha1.Delete {
		crds = "leaving them to the garbage collector once no custom resource is left"
	}
	return fmt.Sprintf("%s of %d CRDs (%s), then %s; the garbage collector removes the rest once the ClusterExtension is released",
		operands, len(names), strings.Join(names, ", "), crds)
}

package extension

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
)

// reconcileDelete is one pass of a deleting extension's uninstall, a
// straight line: read it live (a pass while its Backup runs stops there:
// Engine.WaitingOnBackup), gather what the decisions read, open its
// record, classify the deletion (the cascade), start the record, run the
// steps (the backup gate, the instances of its CRDs, then the CRDs' fate), then release the
// extension, last. The record says Releasing before the finalizer's
// removal and Completed only once it has succeeded.
func (r *Reconciler) reconcileDelete(ctx context.Context, cached *metav1.PartialObjectMetadata, policy *cleanupv1alpha1.CleanupPolicy) (ctrl.Result, error) {
	if !r.Finalizers.HeldBy(cached.Finalizers) {
		return ctrl.Result{}, nil
	}
	ext := &ocv1.ClusterExtension{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cached), ext); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !r.Finalizers.HeldBy(ext.Finalizers) || ext.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	now := time.Now()
	verdict := plan.ClassifyExtension(ext.Finalizers)
	var settings plan.Settings
	if policy != nil {
		settings = plan.SettingsOf(policy)
	}
	if policy != nil && verdict.SkipReason == "" {
		if requeue, waiting := r.Engine.WaitingOnBackup(ctx, cleanup.Extensions, ext, settings); waiting {
			return ctrl.Result{RequeueAfter: requeue}, nil
		}
	}
	in, err := r.gather(ctx, ext)
	if err != nil {
		return ctrl.Result{}, err
	}
	x, err := r.Engine.Open(ctx, &owner{r: r, ext: ext, unavailable: r.operatorUnavailable(ext, in.sets)}, settings, now, false)
	if err != nil {
		return ctrl.Result{}, err
	}
	x.KeepCascade(verdict.Cascade)
	switch {
	case verdict.SkipReason != "":
		return ctrl.Result{}, x.Skip(ctx, verdict.SkipReason, verdict.Message)
	case policy == nil:
		return ctrl.Result{}, x.Skip(ctx, cleanupv1alpha1.ReasonUnmanaged, "no CleanupPolicy selects the ClusterExtension any more; nothing was deleted")
	}
	targets, targetsProblem := plan.ExtensionTargets(ext, settings)
	start := cleanup.Start{Policy: policy.Name, Why: verdict.Message, About: aboutToDo(in.scopes, targets, settings)}
	if verdict.Cascade == plan.CascadeForeground {
		start.WarnReason, start.Warning = "ForegroundCascade", verdict.Message
	}
	if err := x.Start(ctx, start); err != nil {
		return ctrl.Result{}, err
	}

	// A CRD already being deleted (--cascade=foreground) stays in scope: its
	// instances are still there, held by finalizers, until they are gone.
	x.Scopes(in.scopes)
	// A kind whose CRD is gone since an earlier pass has no instance left.
	x.KindsGone(in.crdKinds)
	// The CRDs being deleted count from the first pass that sees them: the
	// CRD step comes only once their instances are gone, and they may be
	// gone with them.
	countTerminating(x, in.scopes)
	var crds crdOutcome
	proceed, res, err := x.Run(ctx,
		x.BackupStep(),
		cleanup.Step{Name: "operands", Run: func(ctx context.Context) (bool, error) {
			done, err := r.operandStep(ctx, x, in, targets, targetsProblem, settings)
			return done, foregroundNote(x.Cascade(), err)
		}},
		cleanup.Step{Name: "CRDs", Run: func(ctx context.Context) (done bool, err error) {
			crds, err = r.crdStep(ctx, x, in, settings)
			return crds.done, err
		}},
	)
	if !proceed {
		return res, err
	}
	return ctrl.Result{}, x.Release(ctx,
		"Everything the policy asked for is done; removing csv-cleaner's finalizer from the ClusterExtension, after which the garbage collector removes what OLM v1 applied",
		"Everything the policy asked for is done; the ClusterExtension is released"+crds.held())
}

// foregroundNote adds to what blocks a foreground cascade that the CRDs
// and the extension wait as long as it lasts.
func foregroundNote(c plan.Cascade, err error) error {
	var p *plan.Problem
	if c != plan.CascadeForeground || !errors.As(err, &p) {
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
func (r *Reconciler) operandStep(ctx context.Context, x *cleanup.Uninstall, in inputs, targets plan.NamespaceSet, targetsProblem *plan.Problem, s plan.Settings) (bool, error) {
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
func aboutToDo(scopes []plan.CRDScope, targets plan.NamespaceSet, s plan.Settings) string {
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

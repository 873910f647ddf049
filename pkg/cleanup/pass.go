package cleanup

import (
	"context"
	"sync"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// Pass is what a controller answers for one pass of its owner's
// uninstall; the engine runs the pass (Engine.Uninstall). A Pass lives for
// one pass: what Classify reads, Steps and Released use.
type Pass interface {
	Hooks
	// Read reads what Classify decides from; the engine calls it while it
	// opens the record, so that the two reads overlap. A failure that only
	// matters to some verdicts may be kept for Classify to return.
	Read(ctx context.Context) error
	// Classify says what the deletion is, from what it reads now: one to
	// let go of at once (Verdict.SkipReason), or an uninstall and how it starts.
	Classify(ctx context.Context, u *Uninstall) (Verdict, error)
	// Steps are the uninstall's steps after the backup gate; the engine
	// asks for them once the record says the uninstall started.
	Steps(u *Uninstall) []Step
	// Released says what the release is about to do (logged) and what it
	// did (the record's message).
	Released() (releasing, completed string)
}

// Verdict is what a controller makes of its owner's deletion.
type Verdict struct {
	// SkipReason, when set, lets the owner go at once, deleting nothing,
	// with Message.
	SkipReason, Message string
	// Start is how an uninstall starts (its Policy is the engine's to set).
	Start Start
}

// Uninstall runs one pass of p's uninstall under policy (nil: no policy
// selects the owner any more) as a straight line of phases, the owner
// released last; docs/architecture.md lists them.
func (e *Engine) Uninstall(ctx context.Context, p Pass, policy *cleanupv1alpha1.CleanupPolicy) (ctrl.Result, error) {
	var settings decide.Settings
	if policy != nil {
		settings = decide.SettingsOf(policy)
		if requeue, waiting := e.WaitingOnBackup(ctx, p.Record(), p.Object(), settings); waiting {
			return ctrl.Result{RequeueAfter: requeue}, nil
		}
	}
	var (
		u       *Uninstall
		openErr error
		opened  sync.WaitGroup
	)
	opened.Go(func() { u, openErr = e.Open(ctx, p, settings, time.Now(), false) })
	readErr := p.Read(ctx)
	opened.Wait()
	switch {
	case openErr != nil:
		return ctrl.Result{}, openErr
	case readErr != nil:
		return ctrl.Result{}, InStep("classify", readErr)
	}
	v, err := p.Classify(ctx, u)
	switch {
	case err != nil:
		return ctrl.Result{}, InStep("classify", err)
	case v.SkipReason != "":
		return ctrl.Result{}, u.Skip(ctx, v.SkipReason, v.Message)
	case policy == nil:
		return ctrl.Result{}, u.Skip(ctx, cleanupv1alpha1.ReasonUnmanaged,
			"no CleanupPolicy selects the "+u.kind.Subject.Kind+" any more; nothing was deleted")
	}
	// The phase is written before anything is deleted: an uninstall shows
	// Deleting, and what it is about to do, from its start.
	v.Start.Policy = policy.Name
	if err := u.Start(ctx, v.Start); err != nil {
		return ctrl.Result{}, err
	}
	proceed, res, err := u.Run(ctx, append([]Step{u.BackupStep()}, p.Steps(u)...)...)
	if !proceed {
		return res, err
	}
	releasing, completed := p.Released()
	return ctrl.Result{}, u.Release(ctx, releasing, completed)
}

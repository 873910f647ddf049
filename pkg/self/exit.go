package self

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// ReleaseOnExit runs after a signal stopped csv-cleaner's manager: on
// SIGTERM the kubelet gives a pod its termination grace period, and when
// csv-cleaner is stopping because it is being uninstalled (decide.DecideSelf: its
// namespace is terminating, or its CSV is deleted with no CSV replacing it)
// it uses that time to remove every finalizer it placed, its own CSV's
// last. That is the only chance when its namespace is deleted: the
// namespace controller deletes its pods in the same pass as its CSV, so the
// SIGTERM comes before or with its own CSV's deletion. A restart, a rollout,
// a scale-down or a Deployment that OLM re-creates is none of that and
// releases nothing; a replaced version releases only its own CSV and RBAC.
// c must read live: the manager's cache is stopped. ctx bounds the work
// (the grace period, less a margin).
func ReleaseOnExit(ctx context.Context, c client.Client, o Install) error {
	log := logr.FromContextOrDiscard(ctx)
	in, err := readInput(ctx, c, o.Self, o.namespace())
	if apierrors.IsForbidden(err) {
		// Its rights went with its CSV: this version was replaced (the next
		// one holds every finalizer) or uninstalled already (its own RBAC is
		// released last, after everything else). Outside OLM, its RBAC may
		// have been deleted before its namespace's pods: then only
		// `csv-cleaner release` can finish.
		log.Info("Stopping without releasing anything: csv-cleaner's rights are gone; if a finalizer of csv-cleaner's is left, run csv-cleaner release", "error", err.Error())
		return nil
	}
	if err != nil {
		return err
	}
	fate, why := decide.DecideSelf(in)
	rl := Releaser{Live: c, Writer: c, Finalizers: o.Finalizers, Hold: rbac.HoldName(o.Hold), Self: o.Self,
		Workers: max(1, o.Workers), Reporter: reporter()}
	switch fate {
	case decide.SelfInstalled:
		log.Info("Stopping; csv-cleaner is not being uninstalled, so every finalizer stays for the next csv-cleaner to run")
		return nil
	case decide.SelfReplaced:
		log.Info("Stopping; another version takes over, so csv-cleaner releases only its own CSV and RBAC", "why", why)
		_, err := rl.ReleaseSelf(ctx)
		return err
	}
	log.Info("Removing every finalizer csv-cleaner placed before it stops: it is being uninstalled", "why", why)
	released, othersErr := rl.ReleaseOthers(ctx)
	log.Info("Removed csv-cleaner's finalizers", "objects", len(released))
	// Its own CSV goes even when an object could not be released: no
	// csv-cleaner will run again to do it, and the error says what is left.
	n, err := rl.ReleaseSelf(ctx)
	log.Info("Released csv-cleaner's own CSV and RBAC, last", "objects", n)
	return errors.Join(othersErr, err)
}

// DefaultReleaseTimeout bounds the release on SIGTERM during csv-cleaner's
// own uninstall (ReleaseOnExit): 10 s inside the grace period the
// manifests ship (terminationGracePeriodSeconds), sized in make bench.
const DefaultReleaseTimeout = 50 * time.Second

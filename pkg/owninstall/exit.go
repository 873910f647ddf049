package owninstall

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

// ReleaseOnExit runs after a signal stopped the manager: when csv-cleaner is
// being uninstalled (decide.DecideSelf) it removes every finalizer it
// placed, its own CSV's last, within ctx (the grace period less a margin);
// replaced, it releases its own CSV and RBAC; otherwise nothing. c reads
// live. docs/own-uninstall.md says why the SIGTERM is the only chance.
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

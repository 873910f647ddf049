// Package owninstall is csv-cleaner's own life cycle: what is happening to
// its own install (installed, replaced by another version, or uninstalled),
// whether OLM v0 installed it or OLM v1; the release of every finalizer it
// placed (in a reconcile, on SIGTERM, in `csv-cleaner release`); and the
// binding of its operand role at start.
//
// It must not import the engine (pkg/cleanup) or a controller: both
// controllers import it.
package owninstall

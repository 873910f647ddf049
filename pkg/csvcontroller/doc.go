// Package csvcontroller is csv-cleaner's controller of OLM v0
// ClusterServiceVersions: it puts csv-cleaner's finalizer on every CSV a
// CleanupPolicy manages and holds its cluster RBAC while it is installed;
// when such a CSV is deleted it acknowledges the deletion at once,
// classifies it (a copy, an upgrade or a reinstall is released at once),
// runs its steps on the engine (the operands, the cluster RBAC and
// webhooks, the CRDs) and releases the CSV last. csv-cleaner's own CSV is
// handled apart, as pkg/owninstall decides. It also plans a CSV's uninstall
// for `csv-cleaner plan` and counts each policy's CSVs. The patches of a
// live CSV are paced (pkg/throttle).
//
// It must not import the other controllers, nor reach into the engine's
// record, nor decide what pkg/decide can decide.
package csvcontroller

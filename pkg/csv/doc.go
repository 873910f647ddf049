// Package csv is csv-cleaner's controller of OLM v0 ClusterServiceVersions.
//
// It puts csv-cleaner's finalizer on every CSV a CleanupPolicy manages and
// holds its cluster RBAC while it is installed (hold.go). When such a CSV
// is deleted, a controller of its own acknowledges the deletion at once
// (acknowledge.go: the record at Deleting and CleanupStarted, never queued
// behind other uninstalls' deletes); the uninstall (delete.go) classifies
// the deletion (a copy, an upgrade or a reinstall is released at once),
// then runs its steps on the engine (steps.go: the operands, the cluster
// RBAC and webhooks, the CRDs) and releases the CSV last (owner.go).
// csv-cleaner's own CSV is handled apart (self.go), as pkg/self decides.
// PlanUninstall (plan.go) is the read-only dry run behind `csv-cleaner
// plan`; the CleanupPolicy status controller counts the CSVs each policy
// manages (policystatus.go). Files: reconciler.go (the skeleton, the
// finalizer), gather.go (what its decisions read), operator.go (the
// operator's Deployments), webhooks.go (its refusing webhooks), setup.go
// and register.go (the cache, the watches).
//
// The patches that manage a live CSV (its finalizer, the RBAC hold) are
// paced by the API server's latency (pkg/pace); an uninstall's are not.
//
// It must not import the ClusterExtension's controller (pkg/extension),
// nor reach into the engine's record, nor decide what pkg/decide can decide.
package csv

// Package cleanup is the uninstall engine: what an uninstall does whatever
// its owner, a CSV (pkg/csv) or a ClusterExtension (pkg/extension).
//
// A controller implements Pass (an Owner: the object, its record's kind,
// whether its operator runs, its own refusing webhooks, its release; and
// how it classifies a deletion, its steps, what its release says) and the
// engine runs one pass of the uninstall as a straight line
// (Engine.Uninstall, pass.go, on an Uninstall, uninstall.go): Open the
// record, classify, Start it (written at Deleting, with CleanupStarted,
// before anything is deleted), Run the backup gate and the steps in order
// (each idempotent, reporting whether it is done; the record is written
// once, at their end, and once more by the backup gate as it opens, before
// the first delete), then Release (Releasing written before the owner's
// release, Completed after); or Skip a deletion that is not an uninstall.
//
// The engine owns: the record and its status (record.go, record_kinds.go,
// owner.go); attempts, their capped backoff and the Retrying condition
// (attempts.go, pending.go); the deletion of the instances of an owner's
// CRDs, by pages, on the slots of --delete-workers, with the access review
// first, refusals classified, a dead conversion webhook turned off, and
// operandTimeout and onTimeout (instances.go, operands.go, slots.go,
// access.go, refusal.go, conversion.go); the deletion's revision and the
// operands of its second (revision.go, revisionsearch.go,
// deletionsecond.go); the backup gate, which deletes nothing before a
// backup holds what the uninstall deletes (backup.go, backupplans.go, and
// backupwait.go, the look at a running Backup that a controller asks before
// it reads anything else; the tool, Velero, is pkg/velero behind
// backupTool); Events and metrics
// (events.go, metrics.go); the client's configuration (client.go,
// retry.go); and the dry run's items
// and its foresight of refusals, which `csv-cleaner plan` prints
// (dryrun.go, dryrun_instances.go, foresee.go, dryrun_backup.go).
//
// Every decision is a pure function of pkg/decide; the Gatherer (gather.go)
// reads their inputs, for the run and the plan alike.
//
// It must not import a controller (pkg/csv, pkg/extension) nor csv-cleaner's
// own life cycle (pkg/self), nor decide what pkg/decide can decide.
package cleanup

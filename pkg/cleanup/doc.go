// Package cleanup decides and acts on ClusterServiceVersions.
//
// It puts csv-cleaner's finalizer on every CSV a CleanupPolicy manages, and
// when such a CSV is deleted it first classifies the deletion (a copy, an
// upgrade, a reinstall or a real uninstall), then runs a straight line of
// idempotent steps — operands, timeout, cluster RBAC and webhooks, CRDs — and
// removes its finalizer last. Every step is derived from the cluster's state,
// so a restart at any point resumes the uninstall. While a managed CSV is
// installed it holds the CSV's cluster RBAC (hold.go), released once the
// operands are gone. What happens to csv-cleaner's own install
// (plan.DecideSelf) decides the rest: an upgrade or a reinstall
// releases only its own CSV and RBAC (self.go); its uninstall, or its
// namespace going, removes every finalizer it placed (Releaser,
// release.go), in its reconcile and on SIGTERM (ReleaseOnExit, exit.go).
// Installed by OLM v1 instead, its own install is the ClusterExtension
// that installed it (selfextension.go): its deletion is the uninstall.
// A controller of its own acknowledges a managed CSV's deletion at once
// (acknowledge.go): the record at phase Deleting and the CleanupStarted
// Event, never queued behind other uninstalls' deletes.
// PlanUninstall is the read-only dry run of an uninstall behind
// `csv-cleaner plan` (dryrun.go). Metrics are in metrics.go. Before it
// deletes any operand it asks the API server whether it may (access.go):
// its rights on operands are only those aggregated into its operand role,
// which it binds to itself at start (bind.go); a missing one blocks the
// uninstall as Forbidden, naming the label that grants it. Every other
// refusal of its requests (a webhook, an admission policy, a conversion)
// is classified (ClassifyRefusal, refusal.go) and blocks the uninstall at
// once, onTimeout applying to refused operands as to stuck ones; the
// operator's own refusing webhooks go at once while it is unavailable
// (webhooks.go).
//
// Every decision of an uninstall is a pure function of pkg/plan. The
// Gatherer (gather.go) is the one reader of their inputs, for the uninstall
// and the dry run alike; the steps carry out what pkg/plan decides
// (operandstep.go, operands.go, steps.go) and the dry run lists the same
// items (dryrun.go; a kind it cannot read is an Unread row,
// dryrun_instances.go; pkg/planprint prints them), and foresees what the API server would refuse the
// run (Foresee, foresee.go: a SubjectAccessReview for the identity
// csv-cleaner runs as, found from its operand bindings, and a dry-run
// DELETE).
//
// An operand created in the second its uninstall began is told apart at
// the deletion's revision: the watch gives it (revision.go), or, when
// csv-cleaner was down as the deletion began, a binary search of Exact
// LISTs of the subject finds it after the fact (revisionsearch.go); the
// record keeps it and how it was found, and an Exact LIST at it says
// whether the operand existed then (deletionsecond.go;
// Gatherer.PlanInstances, for the run and the plan).
//
// The patches that manage a live CSV (its finalizer, the RBAC hold) are
// paced by the API server's latency (pkg/pace, wired in ClientConfig and
// Reconciler.reconcile), so that a first start on thousands of CSVs leaves
// the API server to its other clients as much as its latency allows; an
// uninstall's requests are not paced.
//
// The ClusterExtension's controller (pkg/extension) shares this package's
// machinery through shared.go (Uninstall): the record (an ExtensionCleanup,
// record_kinds.go), the deletion of a CRD's instances (deleteInstances, the
// same code as a CSV's operand step), the Events and the metrics.
package cleanup

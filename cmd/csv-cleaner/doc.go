// Command csv-cleaner runs the controller that makes the uninstall of OLM
// operators complete, safe and resumable. It only wires: flags, the manager
// and the controllers of pkg/cleanup, and after a signal stopped the manager,
// pkg/cleanup's release on exit. Three subcommands: `csv-cleaner plan`
// prints what an uninstall of a CSV would delete and keep (read-only),
// `csv-cleaner release` removes every finalizer csv-cleaner placed that is
// left in a cluster, and `csv-cleaner version` prints the version.
package main

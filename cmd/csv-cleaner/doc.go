// Command csv-cleaner runs the controller that makes the uninstall of OLM
// operators complete, safe and resumable. It only wires: its command line
// (cobra and pflag, root.go), the manager and the controllers of
// pkg/cleanup and pkg/extension, and after a signal stopped the manager,
// pkg/cleanup's release on exit (main.go). Its subcommands: `plan` prints
// what an uninstall of a CSV or a ClusterExtension would delete and keep
// (read-only, plan.go), `release` removes every finalizer csv-cleaner placed
// that is left in a cluster (release.go), `version`, and cobra's `help` and
// `completion`. Installed as kubectl-csv_cleaner it is a kubectl plugin.
package main

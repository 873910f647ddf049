// Command csv-cleaner runs the controller that makes the uninstall of OLM
// operators complete, safe and resumable. It only wires: flags, the manager
// and the controllers of pkg/cleanup. Two subcommands: `csv-cleaner plan`
// prints what an uninstall of a CSV would delete and keep (read-only), and
// `csv-cleaner version` prints the version.
package main

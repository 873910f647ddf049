// Command csv-cleaner runs the controller that makes the uninstall of OLM
// operators complete, safe and resumable, and its command line: `plan`
// (what an uninstall would delete and keep), `undo` (bring back what an
// uninstall under a backup destroyed), `release` (remove every finalizer
// csv-cleaner placed), `version`, `help` and `completion`. Installed as
// kubectl-csv_cleaner it is a kubectl plugin.
//
// It only wires the flags, the manager (pkg/manager), owninstall's release on
// exit (pkg/owninstall), the commands' packages and their printing (pkg/report):
// it must not decide or act.
package main

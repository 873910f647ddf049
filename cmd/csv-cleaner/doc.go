// Command csv-cleaner runs the controller that makes the uninstall of OLM
// operators complete, safe and resumable. It only wires: flags, the manager
// and the controllers of pkg/cleanup.
package main

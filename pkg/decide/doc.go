// Package decide holds every decision of csv-cleaner as pure functions of
// what was read from the cluster: which policy manages an owner and with
// what settings, what a deletion is (a copy, an upgrade, a reinstall, an
// uninstall), the target namespaces and each CRD's scope, each operand's
// fate and the timeout's, the fate of cluster RBAC, webhooks, CRDs and
// console plugins, csv-cleaner's own fate, the backup gate's (the Backup's
// name, content, phases, retries, verification, dependents and volumes).
// What only a ClusterExtension's uninstall decides is its subpackage
// olmv1's; the undo's decisions are pkg/undoplan's. The engine and the controllers carry the decisions out and
// `csv-cleaner plan` prints them.
//
// It must not import a client or read the cluster (a test keeps it so, and
// .golangci.yml's import rules).
package decide

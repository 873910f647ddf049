// Package manager registers csv-cleaner's controllers on one engine: the
// CSV controller (pkg/csvcontroller), the ClusterExtension controller
// (pkg/extensioncontroller) where OLM v1 is served, the Undo controller
// (pkg/undocontroller) where the Undo API is served, csv-cleaner's own
// life cycle (pkg/owninstall) and the binding of its operand role, with the
// manager's cache. The binary (cmd/csv-cleaner), the tests and the
// benchmarks start csv-cleaner through it.
//
// It only wires: it must not decide or act.
package manager

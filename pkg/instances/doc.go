// Package instances reads the instances of a CRD in scope for pkg/decide's
// operand decisions (Gatherer: a page at a time, live, metadata only, and
// whether any is left), for the engine, the revision search and `csv-
// cleaner plan`. The other inputs of the decisions are read where they are
// used (each controller's gather.go, pkg/dependents, pkg/velero).
//
// It only reads, and must not import anything of csv-cleaner above
// pkg/decide and pkg/objects.
package instances

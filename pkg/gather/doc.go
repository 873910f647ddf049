// Package gather is the one reader of the cluster behind the decisions of
// pkg/decide (Gatherer): the uninstall and `csv-cleaner plan` read their
// inputs through it, live where a decision deletes something, a page at a
// time.
//
// It only reads, and must not import anything of csv-cleaner above
// pkg/decide and pkg/objects.
package gather

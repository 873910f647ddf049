// Package objects names the objects csv-cleaner reads everywhere: OLM's
// CSVs and ClusterExtensions as metadata only, their keys and lists, a
// Deployment's availability, and LISTs read a page at a time.
//
// It holds no logic of an uninstall and must not import any other package
// of csv-cleaner: every package may import it.
package objects

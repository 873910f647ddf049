// Package cleanup is the uninstall engine: what an uninstall does whatever
// its owner, a CSV (pkg/csvcontroller) or a ClusterExtension (pkg/extensioncontroller). A
// controller hands the engine a Pass and the engine runs it as a straight
// line (Engine.Uninstall): open the record, classify, start it before
// anything is deleted, run the backup gate (pkg/backupgate) and the
// owner's steps, release. It owns the record and its single write per pass,
// attempts and their backoff, the paged deletion of a CRD's instances on
// the delete slots, the conversion turned off, Events, metrics and the
// client's configuration.
//
// It must not import a controller, csv-cleaner's own life cycle
// (pkg/owninstall) or the undo, nor decide what pkg/decide can decide.
package cleanup

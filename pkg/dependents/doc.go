// Package dependents reads what the garbage collector would delete with an
// uninstall's deletions: every object of the kinds it watches, as metadata
// (and what cannot be read at the version it reads, at the version it is
// stored at), and the claims' volumes, CSI drivers and VolumeSnapshotClasses.
//
// It only reads, and must not decide which objects are dependents or
// whether a volume can be snapshotted (pkg/decide does).
package dependents

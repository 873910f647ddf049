// Command demo shows csv-cleaner on a local control plane (etcd,
// kube-apiserver and kube-controller-manager built from source), with the
// real bin/csv-cleaner as a separate process. make demo: an uninstall
// surviving csv-cleaner scaled to zero, a CSV's, then a ClusterExtension's
// with the garbage collector on and crds: Orphan. make demo-undo (--undo):
// with csv-cleaner's CSI driver and its sidecars, Velero and an S3 server,
// an uninstall under a CleanupPolicy with backup, the data gone, the
// operator installed again, csv-cleaner undo, and every byte back, each
// object linked to its restored owner. It exits non-zero when an end state
// is not the one the docs promise.
//
// It must not touch anything but what it starts, which it removes at the end.
package main

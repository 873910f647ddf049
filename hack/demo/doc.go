// Command demo shows an uninstall surviving csv-cleaner scaled to zero, on a
// local control plane (etcd, kube-apiserver and kube-controller-manager
// built from source), with the real bin/csv-cleaner as a separate process:
// a CSV's uninstall (main.go), then a ClusterExtension's with the garbage
// collector on and crds: Orphan (extension.go). It exits non-zero when an
// end state is not the one the safety rules promise.
// It must not touch anything but the control plane it starts, which it
// removes at the end.
package main

// Command demo shows an uninstall surviving csv-cleaner scaled to zero, on a
// local control plane (etcd and kube-apiserver built from source), with the
// real bin/csv-cleaner as a separate process. It exits non-zero when the end
// state is not the one the safety rules promise.
package main

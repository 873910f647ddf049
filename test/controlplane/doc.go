// Package controlplane starts the local control plane that csv-cleaner's
// tests and demo run on: etcd and kube-apiserver through envtest, from the
// binaries `make control-plane` builds into bin/, optionally
// kube-controller-manager (namespace, garbage-collector, Deployment,
// ReplicaSet, ClusterRole aggregation and volume controllers), with
// OLM's CRDs and csv-cleaner's installed.
package controlplane

// Package cluster starts the end-to-end tests' local cluster: the control
// plane of package controlplane (etcd, kube-apiserver, kube-controller-manager),
// kwok with one fake node that runs pods pinned to it, and OLM's own olm
// operator, all from binaries built into bin/ through the Go module proxy.
package cluster

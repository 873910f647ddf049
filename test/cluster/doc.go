// Package cluster is the end-to-end tests' cluster. Locally it starts the
// control plane of package controlplane (etcd, kube-apiserver,
// kube-controller-manager), kwok with one fake node that runs pods pinned to
// it, and OLM's olm and catalog operators, all from binaries built into bin/
// through the Go module proxy; with E2E_KUBECONFIG set it uses an existing
// cluster instead and starts none of them.
//
// On either, it serves file-based catalogs with opm for OLM to install
// from (ServeCatalog, ServeCatalogDir for catalog/, Subscribe), runs
// csv-cleaner (Cleaner: processes locally, the Deployment's scale
// subresource on an existing cluster; Cleaner.As runs it as the
// ServiceAccount OLM created from its bundle, through KubeconfigAs), and
// runs the sample operator as the ServiceAccount OLM made for it. Locally,
// with no kube-scheduler, it binds pods that name no node to the kwok node.
package cluster

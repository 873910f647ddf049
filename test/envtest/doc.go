// Package envtest holds csv-cleaner's envtest suite (in its _test files): a
// named case for every rule of the controller, run against a real
// kube-apiserver, etcd and kube-controller-manager built from source.
package envtest

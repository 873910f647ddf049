// Command bundle generates csv-cleaner's OLM bundle from its kustomized
// manifests; see main.go and `make bundle`. It must not hold a manifest of
// its own: what the bundle ships comes from manifests/ (make
// verify-generated checks that the bundle is what it generates).
package main

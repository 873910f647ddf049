// Command bundle generates csv-cleaner's OLM bundle from its kustomized
// manifests; see main.go and `make bundle`.
package main

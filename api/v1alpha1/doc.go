// Package v1alpha1 contains the csv-cleaner API: CleanupPolicy, which says
// which ClusterServiceVersions csv-cleaner manages and what an uninstall
// removes, and CSVCleanup, the record of one uninstall.
//
// +kubebuilder:object:generate=true
// +groupName=cleanup.csv-cleaner.io
package v1alpha1

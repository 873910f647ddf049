// Package v1alpha1 contains the csv-cleaner API: CleanupPolicy, which says
// which ClusterServiceVersions csv-cleaner manages and what an uninstall
// removes, and CSVCleanup and ExtensionCleanup, the records of one
// uninstall of a CSV and of an OLM v1 ClusterExtension. It holds the types,
// their validation markers and the lists of reasons (reasons.go), and must
// not hold logic: decisions are pkg/decide's.
//
// +kubebuilder:object:generate=true
// +groupName=cleanup.csv-cleaner.io
package v1alpha1

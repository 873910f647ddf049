package cleanup

import (
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// csvKey is the namespace/name of a CSV.
func csvKey(csv metav1.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: csv.GetNamespace(), Name: csv.GetName()}
}

// csvMetadata is an empty metadata-only CSV, the form in which the cache
// holds CSVs (see CacheOptions).
func csvMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(operatorsv1alpha1.SchemeGroupVersion.WithKind(operatorsv1alpha1.ClusterServiceVersionKind))
	return m
}

// csvMetadataList is an empty list of metadata-only CSVs.
func csvMetadataList() *metav1.PartialObjectMetadataList {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(operatorsv1alpha1.SchemeGroupVersion.WithKind(operatorsv1alpha1.ClusterServiceVersionKind + "List"))
	return l
}

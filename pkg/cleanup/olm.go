package cleanup

import (
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// OLM facts that github.com/operator-framework/api does not export as constants.
const (
	// ProvenanceAnnotationPrefix starts the annotation OLM's catalog operator puts
	// on a CRD it installs with a CSV; the value is "<csv namespace>/<csv name>".
	// Source: operator-lifecycle-manager pkg/lib/operators/alongside (annotation
	// prefix "operatorframework.io/installed-alongside").
	ProvenanceAnnotationPrefix = "operatorframework.io/installed-alongside-"

	// OptOutAnnotation on a CSV asks that its operands are never deleted
	// (the OpenShift console's annotation).
	OptOutAnnotation = "console.openshift.io/disable-operand-delete"

	// OLMFinalizer is the finalizer OLM v0 (since v0.27.0) puts on CSVs; never ours to touch.
	OLMFinalizer = "operators.coreos.com/csv-cleanup"
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

// Provenance returns the CSVs that OLM's installed-alongside annotations on a CRD name.
func Provenance(crdAnnotations map[string]string) []types.NamespacedName {
	var out []types.NamespacedName
	for k, v := range crdAnnotations {
		if !strings.HasPrefix(k, ProvenanceAnnotationPrefix) {
			continue
		}
		ns, name, ok := strings.Cut(v, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			continue
		}
		out = append(out, types.NamespacedName{Namespace: ns, Name: name})
	}
	return out
}

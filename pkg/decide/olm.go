package decide

import (
	"strings"

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

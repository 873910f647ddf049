package objects

import (
	"fmt"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var (
	// CSVKind is an OLM v0 ClusterServiceVersion's.
	CSVKind = operatorsv1alpha1.SchemeGroupVersion.WithKind(operatorsv1alpha1.ClusterServiceVersionKind)
	// ExtensionKind is an OLM v1 ClusterExtension's.
	ExtensionKind = ocv1.GroupVersion.WithKind(ocv1.ClusterExtensionKind)
)

// UninstallMessageAnnotation is a CSV's words, from its author, to whoever
// uninstalls it; the OpenShift console shows it in its uninstall dialog.
const UninstallMessageAnnotation = "operator.openshift.io/uninstall-message"

// ConsolePluginsAnnotation names, on a CSV, the OpenShift ConsolePlugins it
// ships, as a JSON list (decide.ConsolePlugins reads it).
const ConsolePluginsAnnotation = "console.openshift.io/plugins"

// Key is the namespace/name of an object.
func Key(obj metav1.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// Metadata is an empty metadata-only object of a kind.
func Metadata(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

// CSVMetadata is an empty metadata-only CSV, the form in which the
// manager's cache holds CSVs.
func CSVMetadata() *metav1.PartialObjectMetadata { return Metadata(CSVKind) }

// ExtensionMetadata is an empty metadata-only ClusterExtension.
func ExtensionMetadata() *metav1.PartialObjectMetadata { return Metadata(ExtensionKind) }

// MetadataList returns a constructor of metadata lists of a kind.
func MetadataList(gvk schema.GroupVersionKind) func() *metav1.PartialObjectMetadataList {
	return func() *metav1.PartialObjectMetadataList {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		return l
	}
}

// CSVMetadataList is an empty list of metadata-only CSVs.
func CSVMetadataList() *metav1.PartialObjectMetadataList { return MetadataList(CSVKind)() }

// Available reports whether a Deployment has the condition Available=True.
func Available(dep *appsv1.Deployment) bool {
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Down says why a Deployment does not run its pods ("is being deleted",
// "is not Available"); "" while it runs.
func Down(dep *appsv1.Deployment) string {
	switch {
	case !dep.DeletionTimestamp.IsZero():
		return "is being deleted"
	case !Available(dep):
		return "is not Available"
	}
	return ""
}

// Served reports whether the API server serves gvk, as mapper finds it.
func Served(mapper meta.RESTMapper, gvk schema.GroupVersionKind) (bool, error) {
	_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case meta.IsNoMatchError(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("discovering %s: %w", gvk, err)
	}
	return true, nil
}

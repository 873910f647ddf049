package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ExtensionCleanupSpec names the ClusterExtension a record reports on.
type ExtensionCleanupSpec struct {
	// clusterExtensionName is the name of the OLM v1 ClusterExtension (olm.operatorframework.io/v1).
	ClusterExtensionName string `json:"clusterExtensionName"`
}

// ExtensionCleanupStatus is the progress of one uninstall of a ClusterExtension.
type ExtensionCleanupStatus struct {
	// extensionUID is the UID of the ClusterExtension this uninstall is for.
	// An extension of the same name with another UID starts the record afresh.
	// +optional
	ExtensionUID types.UID `json:"extensionUID,omitempty"`

	// cascade is how the ClusterExtension is being deleted (kubectl delete
	// --cascade): Background (the default: the garbage collector deletes
	// what OLM v1 applied once the extension is released), Foreground (it
	// deletes the CRDs and the operator now, while the extension waits) or
	// Orphan (nothing is deleted).
	// +optional
	Cascade string `json:"cascade,omitempty"`

	UninstallStatus `json:",inline"`
}

// ExtensionCleanup records one uninstall of an OLM v1 ClusterExtension. It
// is created the moment a managed ClusterExtension is seen being deleted,
// has the extension's name, and outlives it as history.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=extc
// +kubebuilder:printcolumn:name="EXTENSION",type=string,JSONPath=`.spec.clusterExtensionName`
// +kubebuilder:printcolumn:name="CASCADE",type=string,JSONPath=`.status.cascade`
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="REMAINING",type=integer,JSONPath=`.status.remaining`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ExtensionCleanup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ExtensionCleanupSpec   `json:"spec,omitempty"`
	Status ExtensionCleanupStatus `json:"status,omitempty"`
}

// ExtensionCleanupList is a list of ExtensionCleanup.
//
// +kubebuilder:object:root=true
type ExtensionCleanupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ExtensionCleanup `json:"items"`
}

package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "cleanup.csv-cleaner.io", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this API with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this API to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

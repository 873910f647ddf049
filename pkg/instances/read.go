package instances

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get

// Gatherer reads a CRD's instances in scope, for the operand decisions of
// the uninstall, the revision search and `csv-cleaner plan` alike; the
// controllers' readers embed it (pkg/csvcontroller/gather.go). It can only read.
type Gatherer struct {
	// Live reads from the API server, for every decision that deletes something.
	Live client.Reader
	// Cached reads what may lag a moment (policies, namespaces' labels); the
	// controller's cache, or Live.
	Cached client.Reader
}

// ForEachPage lists every instance of a CRD in scope, metadata only, live,
// and hands each page to fn before it reads the next.
func (g Gatherer) ForEachPage(ctx context.Context, s *decide.CRDScope, fn func([]metav1.PartialObjectMetadata) error) error {
	newList := func() *metav1.PartialObjectMetadataList {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(s.GVR.GroupVersion().WithKind(s.CRD.Spec.Names.Kind + "List"))
		return list
	}
	err := objects.ListPages(ctx, g.Live, newList, func(list *metav1.PartialObjectMetadataList) error { return fn(list.Items) })
	if err != nil {
		return fmt.Errorf("listing %s: %w", s.GVR.GroupResource(), err)
	}
	return nil
}

// InstancesLeft reports whether any instance of a CRD in scope is left.
func (g Gatherer) InstancesLeft(ctx context.Context, s *decide.CRDScope) (bool, error) {
	left := &metav1.PartialObjectMetadataList{}
	left.SetGroupVersionKind(s.GVR.GroupVersion().WithKind(s.CRD.Spec.Names.Kind + "List"))
	if err := g.Live.List(ctx, left, client.Limit(1)); err != nil {
		return false, fmt.Errorf("listing what is left of %s: %w", s.Name, err)
	}
	return len(left.Items) > 0, nil
}

package finalizer

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Edit applies edit to the finalizers of obj (a whole object or its
// metadata, of kind gvk: a CSV or a ClusterExtension) with PatchCached,
// from obj's copy, read live instead when written says this process
// patched the object since (nil: the copy is fresh). Nothing is written
// when the list is right already, and no finalizer is added to an object
// being deleted. An object that is gone is no error.
func Edit(ctx context.Context, reader client.Reader, writer client.Writer, written *Written, gvk schema.GroupVersionKind, obj client.Object, edit func([]string) ([]string, bool)) error {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	m.Namespace, m.Name, m.UID = obj.GetNamespace(), obj.GetName(), obj.GetUID()
	m.ResourceVersion, m.Finalizers, m.DeletionTimestamp = obj.GetResourceVersion(), obj.GetFinalizers(), obj.GetDeletionTimestamp()
	_, err := PatchCached(ctx, reader, writer, written, m, func(cur *metav1.PartialObjectMetadata) []string {
		list, changed := edit(cur.Finalizers)
		if !changed || (!cur.DeletionTimestamp.IsZero() && !Subset(list, cur.Finalizers)) {
			return nil // right already, or a finalizer cannot be added once deletion has started
		}
		logr.FromContextOrDiscard(ctx).V(1).Info("Patching finalizers", "finalizers", list)
		return append([]string{}, list...)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("patching finalizers of %s %s: %w", gvk.Kind, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

package rbac

import (
	"context"
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kinds of cluster-scoped objects OLM labels with a CSV owner.
var (
	ClusterRole                    = rbacv1.SchemeGroupVersion.WithKind("ClusterRole")
	ClusterRoleBinding             = rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding")
	ValidatingWebhookConfiguration = admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingWebhookConfiguration")
	MutatingWebhookConfiguration   = admissionregistrationv1.SchemeGroupVersion.WithKind("MutatingWebhookConfiguration")

	// ClusterRBACKinds are deleted under a policy's clusterRBAC setting, bindings first.
	ClusterRBACKinds = []schema.GroupVersionKind{ClusterRoleBinding, ClusterRole}
	// WebhookKinds are deleted under a policy's webhooks setting.
	WebhookKinds = []schema.GroupVersionKind{ValidatingWebhookConfiguration, MutatingWebhookConfiguration}
)

// OwnedKinds are the kinds an uninstall deletes by the CSV's owner labels,
// in the order it deletes them: bindings, roles, then webhook configurations.
func OwnedKinds() []schema.GroupVersionKind {
	return append(slices.Clone(ClusterRBACKinds), WebhookKinds...)
}

// IsWebhook reports whether a kind is a webhook configuration (a policy's
// webhooks setting), not cluster RBAC (its clusterRBAC setting).
func IsWebhook(gvk schema.GroupVersionKind) bool {
	return slices.Contains(WebhookKinds, gvk)
}

// KindName is how records and logs name a kind: Kind.group.
func KindName(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Kind
	}
	return gvk.Kind + "." + gvk.Group
}

// Owned is what DeleteOwned found of one kind.
type Owned struct {
	GVK schema.GroupVersionKind
	// Found is every object of the kind that carries the CSV's owner labels, terminating ones included.
	Found int
	// Remaining are the found objects that still exist after the deletes,
	// because they carry finalizers.
	Remaining []metav1.PartialObjectMetadata
}

// ForbiddenError says that the API server refused a delete; the uninstall
// waits rather than guessing.
type ForbiddenError struct {
	// Op is what was refused: "deleting", or "changing the finalizers of".
	Op   string
	GVK  schema.GroupVersionKind
	Name string
	Err  error
}

func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("%s %s %q is forbidden: %v", e.Op, KindName(e.GVK), e.Name, e.Err)
}

func (e *ForbiddenError) Unwrap() error { return e.Err }

// ListOwned lists the objects of the kind that carry all three owner labels
// for the CSV. The selector already matches them, but the list comes from
// the server: each is checked again, so that nothing outside the three
// labels is ever acted on.
func ListOwned(ctx context.Context, reader client.Reader, gvk schema.GroupVersionKind, csv types.NamespacedName) ([]metav1.PartialObjectMetadata, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := reader.List(ctx, list, client.MatchingLabelsSelector{Selector: OwnerSelector(csv)}); err != nil {
		return nil, fmt.Errorf("listing %s owned by %s: %w", KindName(gvk), csv, err)
	}
	owned := list.Items[:0]
	for _, obj := range list.Items {
		if IsOwnedBy(obj.GetLabels(), csv) {
			owned = append(owned, obj)
		}
	}
	return owned, nil
}

// Deleting an owned object takes delete on its kind: RBAC cannot narrow it
// to objects with the owner labels; the admission policy of
// manifests/admission does.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles;clusterrolebindings,verbs=list;delete
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=list;delete

// DeleteOwned deletes, idempotently, every object of the kind with all three
// owner labels for the CSV (read through reader, uncached), each with a UID
// precondition. A failed delete returns what it found and what remains, so
// that what it did delete is counted.
func DeleteOwned(ctx context.Context, reader client.Reader, writer client.Writer, gvk schema.GroupVersionKind, csv types.NamespacedName) (Owned, error) {
	items, err := ListOwned(ctx, reader, gvk, csv)
	if err != nil {
		return Owned{GVK: gvk}, err
	}
	return DeleteListed(ctx, writer, gvk, csv, items)
}

// DeleteListed is DeleteOwned on objects of the kind read a moment before
// (Holder.ReleaseOwnedSeen); the owner labels are checked again.
func DeleteListed(ctx context.Context, writer client.Writer, gvk schema.GroupVersionKind, csv types.NamespacedName, listed []metav1.PartialObjectMetadata) (Owned, error) {
	var items []metav1.PartialObjectMetadata
	for _, obj := range listed {
		if IsOwnedBy(obj.GetLabels(), csv) {
			items = append(items, obj)
		}
	}
	out := Owned{GVK: gvk, Found: len(items)}
	for i := range items {
		obj := &items[i]
		if obj.GetDeletionTimestamp() == nil {
			target := &unstructured.Unstructured{}
			target.SetGroupVersionKind(gvk)
			target.SetName(obj.GetName())
			uid := obj.GetUID()
			err := writer.Delete(ctx, target, client.Preconditions{UID: &uid})
			switch {
			case err == nil:
			case apierrors.IsNotFound(err), apierrors.IsConflict(err):
				// Gone, or replaced by a new object of the same name: not ours to delete.
				continue
			case apierrors.IsForbidden(err):
				out.Remaining = append(out.Remaining, items[i:]...)
				return out, &ForbiddenError{Op: "deleting", GVK: gvk, Name: obj.GetName(), Err: err}
			default:
				out.Remaining = append(out.Remaining, items[i:]...)
				return out, fmt.Errorf("deleting %s %q: %w", KindName(gvk), obj.GetName(), err)
			}
		}
		if len(obj.GetFinalizers()) > 0 {
			out.Remaining = append(out.Remaining, *obj)
		}
	}
	return out, nil
}

package rbac

import (
	"context"
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	finalizerpkg "github.com/csv-cleaner/csv-cleaner/pkg/finalizer"
)

// SelfBindingLabel marks the ClusterRoleBindings EnsureSelfBindings creates.
const SelfBindingLabel = "cleanup.csv-cleaner.io/self-binding"

// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterrolebindings,verbs=create

// EnsureSelfBindings gives csv-cleaner's ServiceAccount a second binding to
// each ClusterRole OLM made for its own CSV, owned by the ClusterRole, so
// its rights outlive OLM's bindings while it releases (docs/own-uninstall.md).
// A role or binding OLM is deleting counts while the hold keeps it: it still
// grants, and its second binding is what lets the release finish. It returns
// how many it created.
func EnsureSelfBindings(ctx context.Context, reader client.Reader, writer client.Writer, self types.NamespacedName) (int, error) {
	owned := client.MatchingLabelsSelector{Selector: OwnerSelector(self)}
	bindings := &rbacv1.ClusterRoleBindingList{}
	if err := reader.List(ctx, bindings, owned); err != nil {
		return 0, fmt.Errorf("listing the ClusterRoleBindings of %s: %w", self, err)
	}
	roles := &rbacv1.ClusterRoleList{}
	if err := reader.List(ctx, roles, owned); err != nil {
		return 0, fmt.Errorf("listing the ClusterRoles of %s: %w", self, err)
	}
	roleUID := map[string]types.UID{}
	for _, r := range roles.Items {
		if IsOwnedBy(r.Labels, self) {
			roleUID[r.Name] = r.UID
		}
	}
	created := 0
	for _, b := range bindings.Items {
		uid, ok := roleUID[b.RoleRef.Name]
		if b.RoleRef.Kind != "ClusterRole" || !ok || !IsOwnedBy(b.Labels, self) {
			continue
		}
		copied := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{
				Name:   SelfBindingName(b.Name),
				Labels: map[string]string{SelfBindingLabel: "true", "app.kubernetes.io/managed-by": "csv-cleaner"},
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole", Name: b.RoleRef.Name, UID: uid,
				}},
			},
			RoleRef:  b.RoleRef,
			Subjects: b.Subjects,
		}
		err := writer.Create(ctx, copied)
		switch {
		case err == nil:
			created++
		case apierrors.IsAlreadyExists(err):
		default:
			return created, fmt.Errorf("creating ClusterRoleBinding %s: %w", copied.Name, err)
		}
	}
	return created, nil
}

// SelfBindingName is the name of the copy of OLM's binding.
func SelfBindingName(binding string) string { return binding + "-self" }

// ReleaseSelf takes the hold off csv-cleaner's own ClusterRoles and
// bindings in an order that keeps its rights to the end: the bindings first
// (the self bindings stand in for them), then the ClusterRoles that do not
// let it patch ClusterRoles, then those that do. It returns how many
// objects it changed.
func (h Holder) ReleaseSelf(ctx context.Context, self types.NamespacedName) (int, error) {
	// The self bindings first, even if csv-cleaner never made them while
	// installed: they keep the rights this release needs (docs/own-uninstall.md).
	if _, err := EnsureSelfBindings(ctx, h.Live, h.Writer, self); err != nil {
		return 0, fmt.Errorf("keeping the rights of %s for its release: %w", self, err)
	}
	sel := owned(self)
	finalizer := h.Finalizer
	remove := func(obj *metav1.PartialObjectMetadata) []string {
		if !slices.Contains(obj.Finalizers, finalizer) {
			return nil
		}
		return finalizerpkg.Without(obj.Finalizers, finalizerpkg.Is(finalizer))
	}
	_, changed, err := h.editKind(ctx, ClusterRoleBinding, sel, remove)
	if err != nil {
		return changed, err
	}
	roles := &rbacv1.ClusterRoleList{}
	if err := h.Live.List(ctx, roles, client.MatchingLabelsSelector{Selector: sel.labels}); err != nil {
		return changed, fmt.Errorf("listing the ClusterRoles of %s: %w", self, err)
	}
	slices.SortStableFunc(roles.Items, func(a, b rbacv1.ClusterRole) int {
		return boolOrder(grantsHold(a.Rules), grantsHold(b.Rules))
	})
	for i := range roles.Items {
		obj := &metav1.PartialObjectMetadata{ObjectMeta: roles.Items[i].ObjectMeta}
		obj.SetGroupVersionKind(ClusterRole)
		done, err := finalizerpkg.Patch(ctx, h.Live, h.Writer, obj, remove)
		if err != nil {
			return changed, fmt.Errorf("changing the finalizers of ClusterRole %s: %w", obj.Name, err)
		}
		if done {
			changed++
		}
	}
	return changed, nil
}

// grantsHold reports whether rules let their holder patch ClusterRoles:
// the right that releasing the hold needs.
func grantsHold(rules []rbacv1.PolicyRule) bool {
	for _, r := range rules {
		if anyOf(r.APIGroups, rbacv1.GroupName) && anyOf(r.Resources, "clusterroles") && anyOf(r.Verbs, "patch") {
			return true
		}
	}
	return false
}

func anyOf(values []string, want string) bool {
	return slices.Contains(values, want) || slices.Contains(values, rbacv1.ResourceAll)
}

func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

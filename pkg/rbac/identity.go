package rbac

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// GroupsAnnotation, on the operand binding csv-cleaner makes for itself,
// lists (comma-separated) the groups the API server gave csv-cleaner's
// identity when it bound itself: a SubjectAccessReview for a user says
// nothing true without them (a kubeconfig user's rights often come
// through a group, system:masters among them).
const GroupsAnnotation = "cleanup.csv-cleaner.io/groups"

// Identity is an identity csv-cleaner runs as, whose rights a plan checks.
type Identity struct {
	Subject rbacv1.Subject
	// Groups are the identity's groups; GroupsKnown says whether they are
	// all known: a ServiceAccount's follow from its name, a user's only from
	// the binding's GroupsAnnotation.
	Groups      []string
	GroupsKnown bool
	// From says where the plan found it, for a person.
	From string
}

// String names the identity as a person would: "ServiceAccount ns/name" or "User name".
func (id Identity) String() string {
	if id.Subject.Kind == rbacv1.ServiceAccountKind {
		return "ServiceAccount " + id.Subject.Namespace + "/" + id.Subject.Name
	}
	return id.Subject.Kind + " " + id.Subject.Name
}

// ServiceAccountIdentity is a ServiceAccount's identity, with the groups the API server gives it.
func ServiceAccountIdentity(sa types.NamespacedName, from string) Identity {
	return Identity{
		Subject: rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name},
		Groups:  append(serviceaccount.MakeGroupNames(sa.Namespace), user.AllAuthenticated), GroupsKnown: true, From: from,
	}
}

// identityOf is the identity a binding of csv-cleaner's names, with the
// groups it records.
func identityOf(b *rbacv1.ClusterRoleBinding, s rbacv1.Subject) Identity {
	from := "ClusterRoleBinding " + b.Name
	if s.Kind == rbacv1.ServiceAccountKind {
		return ServiceAccountIdentity(types.NamespacedName{Namespace: s.Namespace, Name: s.Name}, from)
	}
	id := Identity{Subject: s, From: from}
	if groups, ok := b.Annotations[GroupsAnnotation]; ok {
		id.GroupsKnown = true
		for _, g := range strings.Split(groups, ",") {
			if g != "" {
				id.Groups = append(id.Groups, g)
			}
		}
	}
	return id
}

// RunningIdentities finds the identities csv-cleaner runs as: the subjects
// of the operand bindings it makes for itself at every start
// (OperandBindingLabel), whatever its ServiceAccount is called or the
// kubeconfig user it runs as, one each. A ServiceAccount that no longer
// exists (a binding left by an earlier install) is returned in gone; one
// the caller may not read is taken as it is.
func RunningIdentities(ctx context.Context, reader client.Reader) (found, gone []Identity, _ error) {
	bindings := &rbacv1.ClusterRoleBindingList{}
	if err := reader.List(ctx, bindings, client.MatchingLabels{OperandBindingLabel: "true"}); err != nil {
		return nil, nil, fmt.Errorf("listing csv-cleaner's operand bindings: %w", err)
	}
	slices.SortFunc(bindings.Items, func(a, b rbacv1.ClusterRoleBinding) int { return strings.Compare(a.Name, b.Name) })
	seen := map[rbacv1.Subject]bool{}
	for i := range bindings.Items {
		b := &bindings.Items[i]
		if b.DeletionTimestamp != nil {
			continue
		}
		for _, s := range b.Subjects {
			if seen[s] {
				continue
			}
			seen[s] = true
			id := identityOf(b, s)
			exists, err := ServiceAccountExists(ctx, reader, id)
			if err != nil {
				return nil, nil, err
			}
			if exists {
				found = append(found, id)
			} else {
				gone = append(gone, id)
			}
		}
	}
	return found, gone, nil
}

// ServiceAccountExists reports whether the identity's ServiceAccount
// exists; true for a user, and for a ServiceAccount the caller may not read.
func ServiceAccountExists(ctx context.Context, reader client.Reader, id Identity) (bool, error) {
	if id.Subject.Kind != rbacv1.ServiceAccountKind {
		return true, nil
	}
	err := reader.Get(ctx, client.ObjectKey{Namespace: id.Subject.Namespace, Name: id.Subject.Name}, &corev1.ServiceAccount{})
	switch {
	case err == nil, apierrors.IsForbidden(err):
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	}
	return false, fmt.Errorf("reading %s: %w", id, err)
}

// AccessReview is the SubjectAccessReview of whether id may do what attrs say.
func AccessReview(id Identity, attrs authorizationv1.ResourceAttributes) *authorizationv1.SubjectAccessReview {
	spec := authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: &attrs, Groups: id.Groups}
	switch id.Subject.Kind {
	case rbacv1.ServiceAccountKind:
		spec.User = serviceaccount.MakeUsername(id.Subject.Namespace, id.Subject.Name)
	case rbacv1.GroupKind:
		spec.Groups = append([]string{id.Subject.Name}, id.Groups...)
	default:
		spec.User = id.Subject.Name
	}
	return &authorizationv1.SubjectAccessReview{Spec: spec}
}

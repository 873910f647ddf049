package rbac

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The rights on operands. csv-cleaner holds no right on a custom resource
// of its own: it borrows the per-CRD admin ClusterRoles OLM makes for every
// owned CRD of a Succeeded CSV (name <crd>-<version>-admin, verbs * on that
// one resource, owned by the CRD), which the ClusterRole OperandRole
// (manifests/rbac/operand_role.yaml) aggregates by label, and an admin's own
// ClusterRoles labelled OperandGrantLabel.
const (
	// OperandRole is the aggregated ClusterRole that holds csv-cleaner's rights on operands.
	OperandRole = "csv-cleaner-operands"
	// OperandGrantLabel (value "true") aggregates an admin's ClusterRole into
	// OperandRole: how an operator whose CRDs OLM did not install
	// (crdProvenance: Waived) gets its operands deleted.
	OperandGrantLabel = "cleanup.csv-cleaner.io/aggregate-to-operands"
	// OperandBindingLabel marks the ClusterRoleBinding of OperandRole that
	// csv-cleaner creates for itself (OperandBinder).
	OperandBindingLabel = "cleanup.csv-cleaner.io/operand-binding"
	// OLMManagedLabel and AggregateToAdminLabel, both "true", are on OLM's
	// per-CRD admin roles (operator-lifecycle-manager
	// pkg/controller/operators/olm/operatorgroup.go, ensureProvidedAPIClusterRole).
	OLMManagedLabel       = "olm.managed"
	AggregateToAdminLabel = "rbac.authorization.k8s.io/aggregate-to-admin"
)

// OLMAdminRoleSelector selects OLM's per-CRD admin roles: the first
// selector of OperandRole's aggregationRule.
func OLMAdminRoleSelector() labels.Set {
	return labels.Set{AggregateToAdminLabel: "true", OLMManagedLabel: "true"}
}

// OperandVerbs are the verbs an uninstall uses on operands: list them (metadata only),
// delete them, and patch their finalizers away with onTimeout: RemoveFinalizers.
var OperandVerbs = []string{"list", "delete", "patch"}

// HowToGrant says, for a Blocked uninstall's message, which ClusterRole
// grants csv-cleaner a right on operands of a kind.
func HowToGrant(resource string) string {
	return fmt.Sprintf("no ClusterRole aggregated into %s grants it: OLM's per-CRD role <crd>-<version>-admin (labels %s) "+
		"appears once the operator's CSV has Succeeded; for a CRD OLM did not install, apply a ClusterRole labelled %s=true "+
		"that grants %s on %s (docs/rights.md, \"Operands of CRDs OLM did not install\")",
		OperandRole, OLMAdminRoleSelector(), OperandGrantLabel, strings.Join(OperandVerbs, ", "), resource)
}

// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=csv-cleaner-operands
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterrolebindings,verbs=get;create

// OperandBinder gives csv-cleaner's identity OperandRole with a
// ClusterRoleBinding it creates at start: the bundle cannot carry the
// binding, because the install namespace (the ServiceAccount's) is not
// known when the bundle is built. The API server lets csv-cleaner create it
// only because it may bind that one role (verb bind, resourceNames).
type OperandBinder struct {
	// Live reads the role and the binding from the API server.
	Live   client.Reader
	Writer client.Writer
	// Role is the ClusterRole to bind, OperandRole unless a test names another.
	Role string
	// Self is csv-cleaner's own CSV when OLM installed it: the binding then
	// carries its three owner labels, so OLM deletes it with the CSV (and
	// csv-cleaner holds it meanwhile, as all of its own RBAC), and each
	// version of csv-cleaner has a binding of its own through an upgrade.
	Self types.NamespacedName
}

// Ensure creates the binding of Role to subject unless it exists, owned by
// the ClusterRole so that it goes with it, with the identity's groups in
// GroupsAnnotation (what `csv-cleaner plan` asks about it). It returns the
// binding's name and whether it created it.
func (b OperandBinder) Ensure(ctx context.Context, subject rbacv1.Subject, groups []string) (string, bool, error) {
	role := &rbacv1.ClusterRole{}
	if err := b.Live.Get(ctx, client.ObjectKey{Name: b.Role}, role); err != nil {
		return "", false, fmt.Errorf("reading ClusterRole %s: %w", b.Role, err)
	}
	name := OperandBindingName(b.Role, subject, b.Self)
	want := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      map[string]string{OperandBindingLabel: "true", "app.kubernetes.io/managed-by": "csv-cleaner"},
			Annotations: map[string]string{GroupsAnnotation: strings.Join(groups, ",")},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole", Name: role.Name, UID: role.UID,
			}},
		},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{subject},
	}
	if b.Self.Name != "" {
		for k, v := range OwnerLabels(b.Self) {
			want.Labels[k] = v
		}
	}
	// Read first: on every start after the first the binding is there, and
	// a create would only be answered 409 AlreadyExists.
	got := &rbacv1.ClusterRoleBinding{}
	err := b.Live.Get(ctx, client.ObjectKey{Name: name}, got)
	if apierrors.IsNotFound(err) {
		switch err = b.Writer.Create(ctx, want); {
		case err == nil:
			return name, true, nil
		case !apierrors.IsAlreadyExists(err):
			return name, false, fmt.Errorf("creating ClusterRoleBinding %s: %w", name, err)
		}
		// Another replica made it a moment ago.
		err = b.Live.Get(ctx, client.ObjectKey{Name: name}, got)
	}
	if err != nil {
		return name, false, fmt.Errorf("reading ClusterRoleBinding %s: %w", name, err)
	}
	if got.RoleRef != want.RoleRef || !slices.Equal(got.Subjects, want.Subjects) {
		return name, false, fmt.Errorf("ClusterRoleBinding %s exists but binds %s %s to %v, not ClusterRole %s to %v: delete it and csv-cleaner makes it again",
			name, got.RoleRef.Kind, got.RoleRef.Name, got.Subjects, role.Name, want.Subjects)
	}
	if got.DeletionTimestamp != nil {
		return name, false, fmt.Errorf("ClusterRoleBinding %s is being deleted; csv-cleaner makes it again once it is gone", name)
	}
	return name, false, nil
}

// OperandBindingName is a name of at most 63 characters that differs for
// each role, subject and own CSV, so that two installs, or two versions
// during an upgrade, never share a binding.
func OperandBindingName(role string, subject rbacv1.Subject, self types.NamespacedName) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{role, subject.Kind, subject.Namespace, subject.Name, self.Namespace, self.Name}, "\x00")))
	return fmt.Sprintf("%.52s-%s", role, hex.EncodeToString(sum[:5]))
}

// Whoami asks the API server who csv-cleaner is (a SelfSubjectReview, which
// every authenticated identity may create) and returns that identity as the
// subject of a binding (a ServiceAccount in a cluster, a user elsewhere),
// with its groups.
func Whoami(ctx context.Context, c client.Writer) (rbacv1.Subject, []string, error) {
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return rbacv1.Subject{}, nil, fmt.Errorf("asking the API server who csv-cleaner is (SelfSubjectReview): %w", err)
	}
	subject, err := SubjectOf(review.Status.UserInfo.Username)
	return subject, review.Status.UserInfo.Groups, err
}

// SubjectOf turns a username into the subject of a binding.
func SubjectOf(username string) (rbacv1.Subject, error) {
	if username == "" {
		return rbacv1.Subject{}, fmt.Errorf("the API server knows csv-cleaner by no username")
	}
	if strings.HasPrefix(username, serviceaccount.ServiceAccountUsernamePrefix) {
		ns, name, err := serviceaccount.SplitUsername(username)
		if err != nil {
			return rbacv1.Subject{}, fmt.Errorf("reading ServiceAccount username %q: %w", username, err)
		}
		return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}, nil
	}
	return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: username}, nil
}

package bench

import (
	"context"
	"fmt"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// identityNamespace holds the ServiceAccounts the benchmarks run as.
const identityNamespace = "csv-cleaner"

// Identity is a ServiceAccount with a bound token, as csv-cleaner runs in a
// cluster. The API server caches a token's authentication; the admin's client
// certificate instead has its chain verified on every request, which cost
// kube-apiserver about 8 % of its CPU in the profile of a 10,000-operand
// uninstall: a cost one request per operand pays and a DeleteCollection does not.
type Identity struct {
	Config     *rest.Config
	Kubeconfig string
}

// identity creates the ServiceAccount name, binds it to clusterRole, and
// returns a client configuration and a kubeconfig file with its token.
func (e *Env) identity(ctx context.Context, name, clusterRole string) (*Identity, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: identityNamespace, Name: name}}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: identityNamespace}},
		sa,
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "bench-" + name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: identityNamespace, Name: name}},
		},
	} {
		if err := e.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](6 * 3600)}}
	if err := e.Client.SubResource("token").Create(ctx, sa, tr); err != nil {
		return nil, fmt.Errorf("requesting a token for ServiceAccount %s: %w", name, err)
	}
	id := &Identity{Config: rest.AnonymousClientConfig(e.CP.Config), Kubeconfig: filepath.Join(e.LogDir, name+".kubeconfig")}
	id.Config.BearerToken = tr.Status.Token
	kc := clientcmdapi.NewConfig()
	kc.Clusters["bench"] = &clientcmdapi.Cluster{Server: id.Config.Host, CertificateAuthorityData: id.Config.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: name}
	kc.CurrentContext = "bench"
	if err := clientcmd.WriteToFile(*kc, id.Kubeconfig); err != nil {
		return nil, fmt.Errorf("writing the kubeconfig of %s: %w", name, err)
	}
	return id, nil
}

// cleanerRole creates csv-cleaner's ClusterRole as manifests/rbac/role.yaml
// declares it (controller-gen's output from the RBAC markers), so that the
// benchmarks also find a request it is not allowed.
func (e *Env) cleanerRole(ctx context.Context) (string, error) {
	role, err := fixtures.ShippedClusterRole("role.yaml", "csv-cleaner")
	if err != nil {
		return "", err
	}
	role.Name = "bench-" + role.Name
	if err := e.Client.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating ClusterRole %s: %w", role.Name, err)
	}
	return role.Name, nil
}

// leaseRole creates csv-cleaner's Role in its namespace (its leader
// election lease and Events, manifests/rbac/role.yaml) and binds it to the
// ServiceAccount csv-cleaner runs as.
func (e *Env) leaseRole(ctx context.Context) error {
	role, err := fixtures.ShippedRole("role.yaml", "csv-cleaner")
	if err != nil {
		return err
	}
	role.Namespace = identityNamespace
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: identityNamespace, Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: identityNamespace, Name: "csv-cleaner"}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := e.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

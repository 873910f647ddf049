package cluster

import (
	"fmt"
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
)

// KubeconfigAs writes a copy of the admin kubeconfig that impersonates the
// ServiceAccount sa, with the groups Kubernetes gives a ServiceAccount, so
// that the API server authorizes every request against the ServiceAccount's
// RBAC alone. It returns the file's path.
func (c *Cluster) KubeconfigAs(sa types.NamespacedName) (string, error) {
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		return "", fmt.Errorf("reading the admin kubeconfig: %w", err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return "", fmt.Errorf("the admin kubeconfig has no current context %q", cfg.CurrentContext)
	}
	user := cfg.AuthInfos[ctx.AuthInfo].DeepCopy()
	user.Impersonate = fmt.Sprintf("system:serviceaccount:%s:%s", sa.Namespace, sa.Name)
	user.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.Namespace, "system:authenticated"}
	name := "sa-" + sa.Namespace + "-" + sa.Name
	cfg.AuthInfos[name] = user
	ctx = ctx.DeepCopy()
	ctx.AuthInfo = name
	cfg.Contexts[name] = ctx
	cfg.CurrentContext = name
	path := filepath.Join(c.LogDir, "kubeconfig-"+name)
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

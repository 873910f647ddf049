package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// OLMv1 is OLM v1 on the local cluster: bin/catalogd and
// bin/operator-controller (the release hack/control-plane/operator-controller
// pins), their CRDs, and a registry on 127.0.0.1 that serves the images they pull.
type OLMv1 struct {
	c        *Cluster
	Registry *Registry
	// SystemNamespace holds their state (Helm release Secrets).
	SystemNamespace string
	dir             string
}

// The ServiceAccounts OLM v1's controllers run as, as its manifests name them.
const (
	catalogdServiceAccount           = "catalogd-controller-manager"
	operatorControllerServiceAccount = "operator-controller-controller-manager"
)

// StartOLMv1 installs OLM v1's CRDs and starts catalogd, operator-controller
// and the image registry. Each controller runs in a mount namespace of its
// own whose /run is a tmpfs holding a real token of its ServiceAccount at
// the in-cluster path, which both read to learn who they are; the
// API server is reached with the admin kubeconfig.
func (c *Cluster) StartOLMv1(ctx context.Context) (*OLMv1, error) {
	if !c.Local() {
		return nil, errors.New("OLM v1 is started on the local cluster only")
	}
	for _, b := range []string{"catalogd", "operator-controller"} {
		if _, err := os.Stat(filepath.Join(c.BinDir, b)); err != nil {
			return nil, fmt.Errorf("%s is missing from %s: run 'make e2e-tools' first: %w", b, c.BinDir, err)
		}
	}
	paths, err := controlplane.OLMv1ReleaseCRDs()
	if err != nil {
		return nil, err
	}
	if _, err := envtest.InstallCRDs(c.Config, envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true}); err != nil {
		return nil, fmt.Errorf("installing OLM v1's CRDs: %w", err)
	}
	o := &OLMv1{c: c, SystemNamespace: fixtures.ExtensionSystemNamespace, dir: filepath.Join(c.LogDir, "olmv1")}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", o.dir, err)
	}
	if err := client.IgnoreAlreadyExists(c.Client.Create(ctx, fixtures.Namespace(o.SystemNamespace))); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", o.SystemNamespace, err)
	}
	if o.Registry, err = startRegistry(o.dir); err != nil {
		return nil, err
	}
	if err := o.startCatalogd(ctx); err != nil {
		return nil, errors.Join(err, o.Stop())
	}
	if err := o.startOperatorController(ctx); err != nil {
		return nil, errors.Join(err, o.Stop())
	}
	return o, nil
}

func (o *OLMv1) startCatalogd(ctx context.Context) error {
	cert, err := newServingCert(o.dir, "catalogd")
	if err != nil {
		return err
	}
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	return o.start(ctx, "catalogd", catalogdServiceAccount, []string{
		"--system-namespace=" + o.SystemNamespace,
		"--catalogs-server-addr=" + addr, "--external-address=" + addr,
		"--tls-cert=" + cert.CertFile, "--tls-key=" + cert.KeyFile,
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(ports[1]),
		"--webhook-server-port=" + strconv.Itoa(ports[2]),
		"--health-probe-bind-address=0",
		"--cache-dir=" + filepath.Join(o.dir, "catalogd-cache"),
		"--pull-cas-dir=" + o.Registry.CADir,
	})
}

func (o *OLMv1) startOperatorController(ctx context.Context) error {
	return o.start(ctx, "operator-controller", operatorControllerServiceAccount, []string{
		"--system-namespace=" + o.SystemNamespace,
		// catalogd's certificate is its own authority.
		"--catalogd-cas-dir=" + filepath.Join(o.dir, "catalogd", "ca"),
		"--pull-cas-dir=" + o.Registry.CADir,
		"--cache-path=" + filepath.Join(o.dir, "operator-controller-cache"),
		"--health-probe-bind-address=0",
	})
}

// start runs bin/name as the ServiceAccount sa of the system namespace.
func (o *OLMv1) start(ctx context.Context, name, sa string, args []string) error {
	token, err := o.token(ctx, sa)
	if err != nil {
		return err
	}
	tokenFile := filepath.Join(o.dir, name+".token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		return fmt.Errorf("writing the token of %s: %w", name, err)
	}
	// unshare execs sh, which execs the controller: one process, which
	// Stop signals. $0 is the token file, "$@" the command.
	const inCluster = "/run/secrets/kubernetes.io/serviceaccount"
	script := "mount -t tmpfs tmpfs /run && mkdir -p " + inCluster + " && cp \"$0\" " + inCluster + "/token && exec \"$@\""
	wrapped := append([]string{"--mount", "--propagation", "private", "sh", "-c", script, tokenFile, filepath.Join(o.c.BinDir, name)}, args...)
	_, err = o.c.startProcess(name, "unshare", wrapped, []string{"KUBECONFIG=" + o.c.Kubeconfig})
	return err
}

// token creates ServiceAccount sa in the system namespace and returns a token of it.
func (o *OLMv1) token(ctx context.Context, sa string) (string, error) {
	acct := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: o.SystemNamespace}}
	if err := client.IgnoreAlreadyExists(o.c.Client.Create(ctx, acct)); err != nil {
		return "", fmt.Errorf("creating ServiceAccount %s/%s: %w", o.SystemNamespace, sa, err)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrTo(int64(24 * 3600))}}
	if err := o.c.Client.SubResource("token").Create(ctx, acct, tr); err != nil {
		return "", fmt.Errorf("requesting a token of ServiceAccount %s/%s: %w", o.SystemNamespace, sa, err)
	}
	return tr.Status.Token, nil
}

// ServeCatalog pushes a bundle image of every version of the packages and
// a catalog image that lists them, creates a ClusterCatalog called name
// for it and waits until catalogd serves it.
func (o *OLMv1) ServeCatalog(ctx context.Context, name string, pkgs ...fixtures.Package) (*ocv1.ClusterCatalog, error) {
	images := map[string]string{}
	for _, p := range pkgs {
		for _, v := range p.Releases() {
			files, labels, err := p.BundleImage(v)
			if err != nil {
				return nil, err
			}
			ref, err := o.Registry.Push(ctx, "bundles/"+p.Name, "v"+v, files, labels)
			if err != nil {
				return nil, err
			}
			images[p.CSVName(v)] = ref
		}
	}
	files, labels, err := fixtures.CatalogImage(images, pkgs...)
	if err != nil {
		return nil, err
	}
	return o.serve(ctx, name, files, labels)
}

// serve pushes a catalog image of files with labels, creates a
// ClusterCatalog called name for it and waits until catalogd serves it.
func (o *OLMv1) serve(ctx context.Context, name string, files map[string][]byte, labels map[string]string) (*ocv1.ClusterCatalog, error) {
	ref, err := o.Registry.Push(ctx, "catalogs/"+name, "latest", files, labels)
	if err != nil {
		return nil, err
	}
	cat := &ocv1.ClusterCatalog{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: ocv1.ClusterCatalogSpec{Source: ocv1.CatalogSource{
			Type: ocv1.SourceTypeImage, Image: &ocv1.ImageSource{Ref: ref},
		}},
	}
	if err := o.c.Client.Create(ctx, cat); err != nil {
		return nil, fmt.Errorf("creating ClusterCatalog %s: %w", name, err)
	}
	if err := controlplane.WaitFor(ctx, 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := o.c.Client.Get(ctx, client.ObjectKeyFromObject(cat), cat); err != nil {
			return false, err
		}
		return apimeta.IsStatusConditionTrue(cat.Status.Conditions, ocv1.TypeServing), nil
	}); err != nil {
		return nil, fmt.Errorf("waiting for catalogd to serve ClusterCatalog %s (conditions %v; see catalogd.log): %w", name, cat.Status.Conditions, err)
	}
	return cat, nil
}

// Stop stops the registry; the controllers stop with the cluster.
func (o *OLMv1) Stop() error {
	if o.Registry != nil {
		o.Registry.Close()
	}
	return nil
}

func freePorts(n int) ([]int, error) {
	return controlplane.FreePorts(n)
}

func ptrTo[T any](v T) *T { return &v }

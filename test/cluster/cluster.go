package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
)

// The environment of a run against an existing cluster.
const (
	// EnvKubeconfig names the kubeconfig of an existing cluster; when it is
	// set the harness starts no cluster and no csv-cleaner.
	EnvKubeconfig = "E2E_KUBECONFIG"
	// EnvCatalogHost is an address of this machine that the existing
	// cluster's pods reach (kind: the Docker network's gateway); the sample
	// catalog is served there.
	EnvCatalogHost = "E2E_CATALOG_HOST"
	// EnvOLMNamespace is OLM's global catalog namespace ("olm" by default;
	// "openshift-marketplace" on OpenShift).
	EnvOLMNamespace = "E2E_OLM_NAMESPACE"
	// EnvNodeName pins the sample operator's pods to a node ("" by default:
	// the scheduler places them).
	EnvNodeName = "E2E_NODE_NAME"
)

// NodeName is the kwok node of the local cluster; pods pinned to it
// (spec.nodeName) run at once, since the local cluster has no scheduler.
const NodeName = "kwok-node"

// Cluster is the cluster the end-to-end tests run on: a local one the
// harness started, or an existing one (E2E_KUBECONFIG).
type Cluster struct {
	// ControlPlane is nil on an existing cluster.
	*controlplane.ControlPlane
	// Config is an admin's connection; Kubeconfig its file.
	Config     *rest.Config
	Kubeconfig string
	Client     client.Client
	// LogDir holds the log of every process the harness starts.
	LogDir string
	BinDir string
	// OLMNamespace is where OLM runs and global CatalogSources live.
	OLMNamespace string
	// NodeName is where the sample operator's pods run ("" on an existing cluster).
	NodeName string
	// CatalogHost is the address CatalogSources use to reach a catalog this machine serves.
	CatalogHost string
	procs       []*controlplane.Process
	// stopScheduler stops bindPods.
	stopScheduler context.CancelFunc
}

// Local reports whether the harness runs the cluster itself.
func (c *Cluster) Local() bool { return c.ControlPlane != nil }

// Start starts the local cluster (control plane, kwok with its node, OLM's
// olm and catalog operators) from binDir, or connects to the existing
// cluster that E2E_KUBECONFIG names.
func Start(ctx context.Context, binDir string) (*Cluster, error) {
	if binDir == "" {
		binDir = filepath.Join(controlplane.RepoRoot(), "bin")
	}
	if kc := os.Getenv(EnvKubeconfig); kc != "" {
		return connect(kc, binDir)
	}
	cp, err := controlplane.Start(controlplane.Options{BinDir: binDir, ControllerManager: true})
	if err != nil {
		return nil, err
	}
	c := &Cluster{ControlPlane: cp, Config: cp.Config, Kubeconfig: cp.Kubeconfig, LogDir: cp.LogDir, BinDir: binDir,
		OLMNamespace: "olm", NodeName: NodeName, CatalogHost: "127.0.0.1"}
	if err := c.startLocal(ctx); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

// StartForOLMv1 starts a second local cluster, for an install of
// csv-cleaner itself by OLM v1: the control plane with
// kube-controller-manager and OLM v0's CRDs, without csv-cleaner's CRDs
// (operator-controller installs them from the bundle, and refuses CRDs it
// did not apply), kwok or OLM v0. Its pods are never scheduled: the
// harness runs the controllers as processes.
func StartForOLMv1(binDir string) (*Cluster, error) {
	cp, err := controlplane.Start(controlplane.Options{BinDir: binDir, ControllerManager: true, WithoutCleanerCRDs: true})
	if err != nil {
		return nil, err
	}
	c := &Cluster{ControlPlane: cp, Config: cp.Config, Kubeconfig: cp.Kubeconfig, LogDir: cp.LogDir, BinDir: binDir,
		OLMNamespace: "olm", CatalogHost: "127.0.0.1"}
	if err := c.newClient(); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

func connect(kubeconfig, binDir string) (*Cluster, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading %s=%s: %w", EnvKubeconfig, kubeconfig, err)
	}
	host := os.Getenv(EnvCatalogHost)
	if host == "" {
		return nil, fmt.Errorf("%s must name an address of this machine that the cluster's pods reach, to serve the sample catalog", EnvCatalogHost)
	}
	logDir, err := os.MkdirTemp("", "csv-cleaner-e2e-logs-")
	if err != nil {
		return nil, fmt.Errorf("creating the log folder: %w", err)
	}
	c := &Cluster{Config: cfg, Kubeconfig: kubeconfig, LogDir: logDir, BinDir: binDir,
		OLMNamespace: envOr(EnvOLMNamespace, "olm"), NodeName: os.Getenv(EnvNodeName), CatalogHost: host}
	return c, c.newClient()
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func (c *Cluster) newClient() (err error) {
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = 200, 400
	if c.Client, err = client.New(cfg, client.Options{Scheme: cleanup.Scheme()}); err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	return nil
}

// Start a process of the harness; Stop stops them in reverse order.
func (c *Cluster) startProcess(name, bin string, args, env []string) (*controlplane.Process, error) {
	p, err := controlplane.StartProcess(name, bin, args, env, c.LogDir)
	if err == nil {
		c.procs = append(c.procs, p)
	}
	return p, err
}

func (c *Cluster) startLocal(ctx context.Context) error {
	if err := c.newClient(); err != nil {
		return err
	}
	if err := c.startNode(ctx); err != nil {
		return err
	}
	schedCtx, cancel := context.WithCancel(context.Background())
	c.stopScheduler = cancel
	go c.bindPods(schedCtx)
	if err := c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.OLMNamespace}}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", c.OLMNamespace, err)
	}
	env := []string{"KUBECONFIG=" + c.Kubeconfig, "OPERATOR_NAMESPACE=" + c.OLMNamespace}
	// Both bind :8080 for metrics; the second logs that it cannot and goes on.
	if _, err := c.startProcess("olm", filepath.Join(c.BinDir, "olm"),
		[]string{"--writeStatusName=", "--writePackageServerStatusName=", "--namespace=" + c.OLMNamespace},
		append(env, "OPERATOR_NAME=olm-operator")); err != nil {
		return err
	}
	_, err := c.startProcess("catalog", filepath.Join(c.BinDir, "catalog"),
		[]string{"--writeStatusName=", "--namespace=" + c.OLMNamespace}, append(env, "OPERATOR_NAME=catalog-operator"))
	return err
}

// startNode starts kwok, which manages one fake node that is Ready.
func (c *Cluster) startNode(ctx context.Context) error {
	stages := filepath.Join(controlplane.RepoRoot(), "test", "e2e", "kwok", "stages.yaml")
	if _, err := c.startProcess("kwok", filepath.Join(c.BinDir, "kwok"), []string{
		"--kubeconfig=" + c.Kubeconfig, "--manage-single-node=" + NodeName, "--config=" + stages,
	}, nil); err != nil {
		return err
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        NodeName,
		Labels:      map[string]string{"type": "kwok", corev1.LabelHostname: NodeName},
		Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
	}}
	if err := c.Client.Create(ctx, node); err != nil {
		return fmt.Errorf("creating the kwok node: %w", err)
	}
	if err := controlplane.WaitFor(ctx, time.Minute, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
			return false, err
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("waiting for the kwok node to be Ready (see %s): %w", filepath.Join(c.LogDir, "kwok.log"), err)
	}
	return nil
}

// Stop stops every process the harness started, newest first, and the
// local control plane.
func (c *Cluster) Stop() error {
	if c.stopScheduler != nil {
		c.stopScheduler()
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		// OLM, kwok and opm exit non-zero on SIGTERM; that says nothing about the tests.
		_ = c.procs[i].Stop(10 * time.Second)
	}
	if c.ControlPlane == nil {
		return nil
	}
	return c.ControlPlane.Stop()
}

// Around is the cluster of a control plane already started (cp, from
// binDir), without kwok or OLM: what StartCSI and StartVelero need, for a
// demo of csv-cleaner on its own (make demo-undo). Stop stops neither.
func Around(cp *controlplane.ControlPlane, binDir string) (*Cluster, error) {
	c := &Cluster{Config: cp.Config, Kubeconfig: cp.Kubeconfig, LogDir: cp.LogDir, BinDir: binDir}
	return c, c.newClient()
}

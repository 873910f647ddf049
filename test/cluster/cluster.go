package cluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
)

// NodeName is the kwok node; pods pinned to it (spec.nodeName) run at once,
// since the local cluster has no scheduler.
const NodeName = "kwok-node"

// OLMNamespace is where OLM's operator runs.
const OLMNamespace = "olm"

// Cluster is a running local cluster with OLM.
type Cluster struct {
	*controlplane.ControlPlane
	BinDir string
	Client client.Client
	kwok   *controlplane.Process
	olm    *controlplane.Process
}

// Start starts the control plane, kwok with its node, and OLM.
func Start(ctx context.Context, binDir string) (*Cluster, error) {
	if binDir == "" {
		binDir = filepath.Join(controlplane.RepoRoot(), "bin")
	}
	cp, err := controlplane.Start(controlplane.Options{BinDir: binDir, ControllerManager: true})
	if err != nil {
		return nil, err
	}
	c := &Cluster{ControlPlane: cp, BinDir: binDir}
	if err := c.start(ctx); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context) (err error) {
	cfg := *c.Config
	cfg.QPS, cfg.Burst = 200, 400
	if c.Client, err = client.New(&cfg, client.Options{Scheme: cleanup.Scheme()}); err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	stages := filepath.Join(controlplane.RepoRoot(), "test", "e2e", "kwok", "stages.yaml")
	if c.kwok, err = controlplane.StartProcess("kwok", filepath.Join(c.BinDir, "kwok"), []string{
		"--kubeconfig=" + c.Kubeconfig, "--manage-single-node=" + NodeName, "--config=" + stages,
	}, nil, c.LogDir); err != nil {
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
	if err := c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: OLMNamespace}}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", OLMNamespace, err)
	}
	c.olm, err = controlplane.StartProcess("olm", filepath.Join(c.BinDir, "olm"),
		[]string{"--writeStatusName=", "--writePackageServerStatusName=", "--namespace=" + OLMNamespace},
		[]string{"KUBECONFIG=" + c.Kubeconfig, "OPERATOR_NAMESPACE=" + OLMNamespace, "OPERATOR_NAME=olm-operator"}, c.LogDir)
	return err
}

// Stop stops OLM, kwok and the control plane.
func (c *Cluster) Stop() error {
	var errs []error
	for _, p := range []*controlplane.Process{c.olm, c.kwok} {
		if p != nil {
			// Both exit non-zero on SIGTERM; that says nothing about the tests.
			_ = p.Stop(10 * time.Second)
		}
	}
	return errors.Join(append(errs, c.ControlPlane.Stop())...)
}

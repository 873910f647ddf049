package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// Env is the control plane the benchmarks run on, with an admin client fast
// enough that setting up never limits what is measured.
type Env struct {
	CP      *controlplane.ControlPlane
	Client  client.Client
	Dynamic dynamic.Interface
	// Bin is csv-cleaner, built from this checkout.
	Bin    string
	LogDir string
	// CleanerID is the ServiceAccount csv-cleaner runs as, with its own ClusterRole.
	CleanerID *Identity
	// FloorID is the ServiceAccount the floor's bare client runs as (cluster-admin).
	FloorID *Identity
}

// Start starts etcd and kube-apiserver and builds csv-cleaner.
func Start() (*Env, error) {
	// Only the ClusterRole aggregation runs besides etcd and kube-apiserver:
	// it gives csv-cleaner its rights on operands, as in a cluster.
	cp, err := controlplane.Start(controlplane.Options{ControllerManager: true, Controllers: []string{"clusterrole-aggregation"}, OLMv1: true})
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS, cfg.Burst = 5000, 10000
	e := &Env{CP: cp, LogDir: cp.LogDir, Bin: filepath.Join(cp.LogDir, "csv-cleaner")}
	if e.Client, err = client.New(cfg, client.Options{Scheme: cleanup.Scheme()}); err != nil {
		return nil, fmt.Errorf("creating the client: %w", err)
	}
	if e.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("creating the dynamic client: %w", err)
	}
	ctx := context.Background()
	if err := e.serveOLMKinds(ctx); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	role, err := e.cleanerRole(ctx)
	if err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	if err := fixtures.ApplyOperandRole(ctx, e.Client); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	if e.CleanerID, err = e.identity(ctx, "csv-cleaner", role); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	if err := e.leaseRole(ctx); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	if e.FloorID, err = e.identity(ctx, "floor", "cluster-admin"); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	build := exec.Command("go", "build", "-o", e.Bin, "./cmd/csv-cleaner")
	build.Dir = controlplane.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		return nil, errors.Join(fmt.Errorf("building csv-cleaner: %w\n%s", err, out), e.Stop())
	}
	return e, nil
}

// serveOLMKinds makes one request for each of OLM's kinds, as OLM's own
// watches have done long before in a cluster where OLM runs: kube-apiserver
// sets up a CRD's storage and watch cache on the first request for it, which
// cost the first uninstall about a second in its LIST of Subscriptions.
func (e *Env) serveOLMKinds(ctx context.Context) error {
	for _, list := range []client.ObjectList{
		&operatorsv1alpha1.ClusterServiceVersionList{}, &operatorsv1alpha1.SubscriptionList{},
		&operatorsv1alpha1.InstallPlanList{}, &operatorsv1alpha1.CatalogSourceList{}, &operatorsv1.OperatorGroupList{},
	} {
		if err := e.Client.List(ctx, list, client.Limit(1)); err != nil {
			return fmt.Errorf("listing %T: %w", list, err)
		}
	}
	return nil
}

// Stop stops the control plane.
func (e *Env) Stop() error { return e.CP.Stop() }

// Cleaner is one csv-cleaner process.
type Cleaner struct {
	*controlplane.Process
	Metrics string
	// Started is when the process was started.
	Started time.Time
}

// StartCleaner starts csv-cleaner with its defaults (no leader election:
// one replica) plus args, and returns once it is ready.
func (e *Env) StartCleaner(ctx context.Context, name string, args ...string) (*Cleaner, error) {
	return e.startCleaner(ctx, name, nil, args...)
}

// startCleaner is StartCleaner with env added to the process's environment.
func (e *Env) startCleaner(ctx context.Context, name string, env []string, args ...string) (*Cleaner, error) {
	free, err := controlplane.FreePorts(2)
	if err != nil {
		return nil, err
	}
	ports := []string{"127.0.0.1:" + strconv.Itoa(free[0]), "127.0.0.1:" + strconv.Itoa(free[1])}
	c := &Cleaner{Metrics: ports[0], Started: time.Now()}
	// BENCH_CLEANER_ARGS passes extra flags to every csv-cleaner, to explore
	// other settings or to profile it (--pprof-bind-address).
	args = append(args, strings.Fields(os.Getenv("BENCH_CLEANER_ARGS"))...)
	c.Process, err = controlplane.StartProcess(name, e.Bin, append([]string{
		"--kubeconfig=" + e.CleanerID.Kubeconfig, "--metrics-bind-address=" + ports[0], "--metrics-secure=false", "--health-probe-bind-address=" + ports[1],
	}, args...), env, e.LogDir)
	if err != nil {
		return nil, err
	}
	err = controlplane.WaitFor(ctx, time.Minute, 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		if c.Exited() {
			return false, fmt.Errorf("%s exited (see %s.log)", name, filepath.Join(e.LogDir, name))
		}
		code, _, err := controlplane.HTTPGet(ctx, "http://"+ports[1]+"/readyz")
		return err == nil && code == http.StatusOK, nil
	})
	return c, err
}

package controlplane

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	olmcrds "github.com/operator-framework/api/crds"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
)

// Options choose what runs besides etcd and kube-apiserver.
type Options struct {
	// BinDir holds etcd, kube-apiserver and kube-controller-manager; default: the repository's bin/.
	BinDir string
	// ControllerManager starts kube-controller-manager with the namespace, garbage-collector, Deployment, ReplicaSet, ClusterRole aggregation and volume (binder, claim and volume protection) controllers.
	ControllerManager bool
	// Controllers, when set, are the only controllers kube-controller-manager runs.
	Controllers []string
	// LogDir receives the logs of the processes started here; default: a temporary folder.
	LogDir string
	// OLMv1 installs OLM v1's ClusterExtension and ClusterObjectSet CRDs
	// (operator-controller's, from the pinned module, OLMv1CRDs).
	OLMv1 bool
	// WithoutCleanerCRDs leaves csv-cleaner's CRDs out, for a cluster where
	// OLM installs them from csv-cleaner's bundle.
	WithoutCleanerCRDs bool
}

// ControlPlane is a running local control plane.
type ControlPlane struct {
	Env *envtest.Environment
	// Config is an admin's connection (system:masters).
	Config *rest.Config
	// MastersToken is a connection as a user in system:masters that
	// authenticates with a bearer token (a static token file), as a
	// ServiceAccount does, rather than with a client certificate, whose chain
	// kube-apiserver verifies on every request: for comparisons of what a
	// request costs kube-apiserver by identity.
	MastersToken *rest.Config
	// Kubeconfig is the path of a kubeconfig file for Config, for other processes.
	Kubeconfig string
	LogDir     string
	kcm        *Process
	// kcmBinDir and kcmControllers are what kcm was started with.
	kcmBinDir      string
	kcmControllers []string
	// apiServer is kube-apiserver once RestartAPIServer restarted it.
	apiServer *Process
	logs      []*os.File
	dir       string
}

// RepoRoot is the repository's top folder, found from this source file.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Start starts etcd and kube-apiserver, installs OLM's CRDs and
// csv-cleaner's (unless opts.WithoutCleanerCRDs), and with opts.ControllerManager starts kube-controller-manager.
func Start(opts Options) (*ControlPlane, error) {
	if opts.BinDir == "" {
		opts.BinDir = filepath.Join(RepoRoot(), "bin")
	}
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(opts.BinDir, b)); err != nil {
			return nil, fmt.Errorf("%s is missing from %s: run 'make control-plane' first: %w", b, opts.BinDir, err)
		}
	}
	dir, err := os.MkdirTemp("", "csv-cleaner-cp-")
	if err != nil {
		return nil, fmt.Errorf("creating a temporary folder: %w", err)
	}
	if opts.LogDir == "" {
		opts.LogDir = filepath.Join(dir, "logs")
	}
	if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the log folder: %w", err)
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: opts.BinDir,
		CRDs: []*apiextensionsv1.CustomResourceDefinition{
			olmcrds.ClusterServiceVersion(), olmcrds.OperatorGroup(), olmcrds.Subscription(),
			olmcrds.CatalogSource(), olmcrds.InstallPlan(), olmcrds.OperatorCondition(), olmcrds.Operator(), olmcrds.OLMConfig(),
		},
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "manifests", "crd")},
		ErrorIfCRDPathMissing: true,
		Scheme:                cleanup.Scheme(),
	}
	if opts.WithoutCleanerCRDs {
		env.CRDDirectoryPaths = nil
	}
	if opts.OLMv1 {
		paths, err := OLMv1CRDs()
		if err != nil {
			return nil, err
		}
		env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, paths...)
	}
	cp := &ControlPlane{Env: env, LogDir: opts.LogDir, dir: dir}
	// envtest's etcd and kube-apiserver log next to the other processes.
	for _, name := range []string{"etcd", "kube-apiserver"} {
		f, err := os.OpenFile(filepath.Join(opts.LogDir, name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("opening the log of %s: %w", name, err), cp.closeLogs())
		}
		cp.logs = append(cp.logs, f)
	}
	env.ControlPlane.Etcd = &envtest.Etcd{Out: cp.logs[0], Err: cp.logs[0]}
	env.ControlPlane.GetAPIServer().Out, env.ControlPlane.GetAPIServer().Err = cp.logs[1], cp.logs[1]
	token, err := mastersTokenFile(dir)
	if err != nil {
		return nil, errors.Join(err, cp.closeLogs())
	}
	env.ControlPlane.GetAPIServer().Configure().Append("token-auth-file", filepath.Join(dir, "tokens.csv"))
	if cp.Config, err = env.Start(); err != nil {
		return nil, fmt.Errorf("starting etcd and kube-apiserver: %w", err)
	}
	cp.MastersToken = rest.AnonymousClientConfig(cp.Config)
	cp.MastersToken.BearerToken = token
	admin, err := env.AddUser(envtest.User{Name: "csv-cleaner-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("adding an admin user: %w", err), cp.Stop())
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("writing the admin kubeconfig: %w", err), cp.Stop())
	}
	cp.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(cp.Kubeconfig, kubeconfig, 0o600); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	cp.Config = admin.Config()
	if opts.ControllerManager {
		if err := cp.startControllerManager(opts.BinDir, opts.Controllers); err != nil {
			return nil, errors.Join(err, cp.Stop())
		}
	}
	return cp, nil
}

// StartControllers starts another kube-controller-manager, logging to
// name.log, that runs only controllers (from binDir): a benchmark that
// needs the garbage collector and the volume controllers for a while
// beside a control plane that runs without them. Stop it when done.
func (cp *ControlPlane) StartControllers(binDir, name string, controllers []string) (*Process, error) {
	return cp.controllerManager(binDir, name, controllers)
}

func (cp *ControlPlane) startControllerManager(binDir string, controllers []string) error {
	if len(controllers) == 0 {
		// The volume controllers bind claims to volumes and let a deleted
		// claim or volume go once nothing uses it (without them a deleted
		// claim hangs on its kubernetes.io/pvc-protection finalizer).
		controllers = []string{"namespace", "garbagecollector", "deployment", "replicaset", "clusterrole-aggregation",
			"persistentvolume-binder", "pv-protection", "pvc-protection"}
	}
	cp.kcmBinDir, cp.kcmControllers = binDir, controllers
	var err error
	cp.kcm, err = cp.controllerManager(binDir, "kube-controller-manager", controllers)
	return err
}

// RestartControllerManager stops the kube-controller-manager Start started
// and starts it again with the same controllers: its garbage collector then
// learns every kind afresh.
func (cp *ControlPlane) RestartControllerManager() error {
	if cp.kcm == nil {
		return errors.New("no kube-controller-manager was started")
	}
	// kube-controller-manager exits non-zero on SIGTERM: that says nothing here.
	_ = cp.kcm.Stop(10 * time.Second)
	var err error
	cp.kcm, err = cp.controllerManager(cp.kcmBinDir, "kube-controller-manager", cp.kcmControllers)
	return err
}

// controllerManager starts kube-controller-manager with controllers, logging to name.log.
func (cp *ControlPlane) controllerManager(binDir, name string, controllers []string) (*Process, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	return StartProcess(name, filepath.Join(binDir, "kube-controller-manager"), []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--authentication-kubeconfig=" + cp.Kubeconfig,
		"--authorization-kubeconfig=" + cp.Kubeconfig,
		"--controllers=" + strings.Join(controllers, ","),
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--concurrent-namespace-syncs=5",
	}, nil, cp.LogDir)
}

// Stop stops every process and removes the temporary folder.
func (cp *ControlPlane) Stop() error {
	var errs []error
	if cp.kcm != nil {
		// kube-controller-manager exits non-zero on SIGTERM: that says nothing here.
		_ = cp.kcm.Stop(10 * time.Second)
	}
	if cp.apiServer != nil {
		// Stop the restarted kube-apiserver before envtest stops etcd.
		if err := cp.apiServer.Stop(30 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if err := cp.Env.Stop(); err != nil {
		errs = append(errs, fmt.Errorf("stopping etcd and kube-apiserver: %w", err))
	}
	errs = append(errs, cp.closeLogs())
	if os.Getenv("KEEP_CONTROL_PLANE_LOGS") == "" {
		errs = append(errs, os.RemoveAll(cp.dir))
	}
	return errors.Join(errs...)
}

func (cp *ControlPlane) closeLogs() error {
	var errs []error
	for _, f := range cp.logs {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// FreePorts are n distinct TCP ports on loopback that nothing listens on
// right now: each is held until all are chosen, so that no two are the same.
func FreePorts(n int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// FreePort is a TCP port on loopback that nothing listens on right now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

// WaitFor polls cond every interval until it is true, the context ends or timeout passes.
func WaitFor(ctx context.Context, timeout, interval time.Duration, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ok, err := cond(ctx)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// mastersTokenFile writes kube-apiserver's static token file with one user
// in system:masters, and returns its token.
func mastersTokenFile(dir string) (string, error) {
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	token := hex.EncodeToString(raw)
	line := token + ",csv-cleaner-masters,csv-cleaner-masters,\"system:masters\"\n"
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(line), 0o600); err != nil {
		return "", fmt.Errorf("writing the static token file: %w", err)
	}
	return token, nil
}

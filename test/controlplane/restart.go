package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
)

// RestartAPIServer stops kube-apiserver with SIGTERM, waits until it has
// exited, and starts it again with the same command line, so with the same
// port, certificates and etcd: clients reconnect to it as they would to a
// restarted API server of a real cluster.
func (cp *ControlPlane) RestartAPIServer(ctx context.Context) error {
	pid, args, err := cp.apiServerProcess()
	if err != nil {
		return err
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		return fmt.Errorf("finding kube-apiserver (pid %d): %w", pid, err)
	}
	// kube-apiserver stops serving at once on SIGTERM, then waits up to its
	// request timeout (60 s) for open connections to close; like the kubelet
	// with a short termination grace period, give it 5 s before SIGKILL.
	if err := proc.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	if WaitFor(ctx, 5*time.Second, 50*time.Millisecond, func(context.Context) (bool, error) { return exited(pid), nil }) != nil {
		if err := proc.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("killing kube-apiserver: %w", err)
		}
		if err := WaitFor(ctx, 30*time.Second, 50*time.Millisecond, func(context.Context) (bool, error) { return exited(pid), nil }); err != nil {
			return fmt.Errorf("waiting for kube-apiserver (pid %d) to exit: %w", pid, err)
		}
	}
	if cp.apiServer != nil {
		<-cp.apiServer.done // reaped
	}
	if cp.apiServer, err = StartProcess("kube-apiserver", args[0], args[1:], nil, cp.LogDir); err != nil {
		return err
	}
	return cp.waitHealthy(ctx)
}

// apiServerProcess finds the running kube-apiserver of this control plane
// by its certificate folder, which only it uses.
func (cp *ControlPlane) apiServerProcess() (int, []string, error) {
	if cp.apiServer != nil && !cp.apiServer.Exited() {
		return cp.apiServer.Pid(), cp.apiServer.cmd.Args, nil
	}
	return findProcess("kube-apiserver", "--cert-dir="+cp.Env.ControlPlane.APIServer.CertDir)
}

// waitHealthy waits until kube-apiserver answers /readyz.
func (cp *ControlPlane) waitHealthy(ctx context.Context) error {
	httpClient, err := rest.HTTPClientFor(cp.Config)
	if err != nil {
		return fmt.Errorf("creating an HTTP client: %w", err)
	}
	url := strings.TrimRight(cp.Config.Host, "/") + "/readyz"
	return WaitFor(ctx, time.Minute, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// exited reports whether process pid is gone or a zombie.
func exited(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X'
}

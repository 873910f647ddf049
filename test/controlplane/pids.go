package controlplane

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// APIServerPid is the process id of this control plane's kube-apiserver.
func (cp *ControlPlane) APIServerPid() (int, error) {
	pid, _, err := cp.apiServerProcess()
	return pid, err
}

// EtcdPid is the process id of this control plane's etcd, found by its data
// folder, which only it uses.
func (cp *ControlPlane) EtcdPid() (int, error) {
	pid, _, err := findProcess("etcd", "--data-dir="+cp.Env.ControlPlane.Etcd.DataDir)
	return pid, err
}

// findProcess finds a running process of the named binary whose command
// line has the argument arg.
func findProcess(binary, arg string) (int, []string, error) {
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		return 0, nil, fmt.Errorf("listing processes: %w", err)
	}
	for _, p := range procs {
		raw, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(raw, []byte(arg)) {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if filepath.Base(args[0]) != binary {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			continue
		}
		return pid, args, nil
	}
	return 0, nil, fmt.Errorf("no %s of this control plane is running (none with %s)", binary, arg)
}

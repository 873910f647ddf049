package controlplane

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Process is a program the harness started, its output in LogDir/<name>.log.
type Process struct {
	Name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartProcess starts bin with args and extra environment, appending its
// output to logDir/name.log.
func StartProcess(name, bin string, args, env []string, logDir string) (*Process, error) {
	logFile, err := os.OpenFile(filepath.Join(logDir, name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the log of %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("starting %s (%s): %w", name, bin, err), logFile.Close())
	}
	p := &Process{Name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = errors.Join(cmd.Wait(), logFile.Close())
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM and waits up to timeout for the process to end; it
// returns the exit error, so a clean stop returns nil. Past the timeout the
// process is killed and an error returned.
func (p *Process) Stop(timeout time.Duration) error {
	if p.Exited() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signalling %s: %w", p.Name, err)
	}
	select {
	case <-p.done:
		if p.err != nil {
			return fmt.Errorf("%s did not stop cleanly: %w", p.Name, p.err)
		}
		return nil
	case <-time.After(timeout):
		p.Kill()
		return fmt.Errorf("%s did not stop within %s of SIGTERM", p.Name, timeout)
	}
}

// Kill sends SIGKILL and waits for the process to end: a crash.
func (p *Process) Kill() {
	if p.Exited() {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

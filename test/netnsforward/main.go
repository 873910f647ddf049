package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/csv-cleaner/csv-cleaner/test/netnsforward/carry"
)

// listens is the repeated -listen flag: address=socket.
type listens []string

func (l *listens) String() string     { return strings.Join(*l, ",") }
func (l *listens) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var l listens
	flag.Var(&l, "listen", "ADDRESS=SOCKET: listen on ADDRESS and carry each connection to the Unix socket SOCKET (repeated)")
	flag.Parse()
	if err := run(l, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "netnsforward:", err)
		os.Exit(1)
	}
}

func run(l listens, command []string) error {
	if len(command) == 0 {
		return errors.New("no command to run after --")
	}
	for _, spec := range l {
		addr, sock, ok := strings.Cut(spec, "=")
		if !ok {
			return fmt.Errorf("-listen %q is not ADDRESS=SOCKET", spec)
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		go carry.Serve(ln, func() (net.Conn, error) { return net.Dial("unix", sock) })
	}
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for s := range signals {
			_ = cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	return err
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/owninstall"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/pkg/report"
)

// pluginName is the name kubectl (and krew) finds csv-cleaner by as a
// plugin: `kubectl csv-cleaner plan …` runs kubectl-csv_cleaner.
const pluginName = "kubectl-csv_cleaner"

// usageError is bad input on the command line: exit code 2, as the flag
// package and kubectl give it.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef makes a usageError.
func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitError is a failure with an exit code of its own (undo's 3 and 4).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// execute runs the command line args (without the program's name) as the
// program name calls it and returns the process's exit code: 0, 1 when
// the command failed, 2 on bad usage.
func execute(program string, args []string, stdout, stderr io.Writer) int {
	root := newRootCommand(program, stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	_, _ = fmt.Fprintf(stderr, "%s: %v\n", cmd.CommandPath(), err)
	if errors.As(err, new(usageError)) {
		_, _ = fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return 2
	}
	if exit := (exitError{}); errors.As(err, &exit) {
		return exit.code
	}
	return 1
}

// newRootCommand is csv-cleaner's command tree: the root runs the
// controller; plan, release and version are its subcommands, with cobra's
// help and completion. Called as kubectl-csv_cleaner it calls itself
// "kubectl csv-cleaner", as a kubectl plugin does.
func newRootCommand(program string, stdout, stderr io.Writer) *cobra.Command {
	var o options
	root := &cobra.Command{
		Use:   "csv-cleaner",
		Short: "Makes the uninstall of an OLM operator complete, safe and resumable",
		Long: `csv-cleaner makes the uninstall of an operator installed by OLM (a
ClusterServiceVersion, or an OLM v1 ClusterExtension) complete, safe and
resumable: it deletes the operator's custom resources, cluster RBAC and
webhooks as its CleanupPolicy says, and releases its finalizer last.

Without a subcommand it runs the controller (in the cluster, or against
$KUBECONFIG's).`,
		Args:          noArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
			if err := run(o); err != nil {
				ctrl.Log.WithName("setup").Error(err, "csv-cleaner stopped")
				return errors.New("stopped: " + err.Error())
			}
			return nil
		},
	}
	if filepath.Base(program) == pluginName {
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl csv-cleaner"}
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	controllerFlags(root.Flags(), &o)
	root.AddCommand(newPlanCommand(stdout), newUndoCommand(stdout, stderr), newReleaseCommand(stdout), newVersionCommand(stdout))
	return root
}

// noArgs refuses positional arguments as bad usage.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("no arguments expected, got %q (subcommands: %s)", args, strings.Join(subcommands(cmd), ", "))
	}
	return nil
}

// subcommands names a command's subcommands, for an error message.
func subcommands(cmd *cobra.Command) []string {
	var out []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			out = append(out, c.Name())
		}
	}
	return out
}

// controllerFlags are the controller's flags, controller-runtime's
// --kubeconfig and zap's logging flags among them.
func controllerFlags(fs *pflag.FlagSet, o *options) {
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443", "Address the metrics endpoint binds to; 0 disables it.")
	fs.BoolVar(&o.secureMetrics, "metrics-secure", true, "Serve metrics over HTTPS to clients that authenticate with a token and may get /metrics (a SubjectAccessReview); false serves plain HTTP to anyone.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address the health probes bind to.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "0", "Address Go's pprof profiles are served on, for profiling; 0 (the default) disables them.")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader so that only one replica acts at a time.")
	fs.StringVar(&o.leaderNS, "leader-election-namespace", os.Getenv("POD_NAMESPACE"), "Namespace of the leader election lease; defaults to the pod's namespace.")
	fs.DurationVar(&o.lease.duration, "leader-election-lease-duration", 15*time.Second, "How long a standby waits before it takes over a lease its leader stopped renewing.")
	fs.DurationVar(&o.lease.renewDeadline, "leader-election-renew-deadline", 10*time.Second, "How long the leader keeps trying to renew its lease before it gives up leadership.")
	fs.DurationVar(&o.lease.retryPeriod, "leader-election-retry-period", 2*time.Second, "How often candidates try to acquire or renew the lease.")
	fs.StringVar(&o.finalizers.Current, "finalizer", decide.DefaultFinalizer, "Finalizer csv-cleaner puts on managed CSVs; give two instances different names.")
	fs.StringArrayVar(&o.finalizers.Legacy, "legacy-finalizer", nil, "An earlier finalizer name of csv-cleaner's (repeatable): replaced on live CSVs, counted as ours on deleting ones.")
	fs.BoolVar(&o.rbacHoldOn, "rbac-hold", true, "Keep a managed operator's ClusterRoles and bindings in force until its operands are gone.")
	fs.StringVar(&o.rbacHold, "rbac-hold-finalizer", rbac.HoldFinalizer, "Finalizer that holds the cluster RBAC; give two instances different names.")
	fs.Float64Var(&o.qps, "kube-api-qps", cleanup.DefaultQPS, "Requests per second csv-cleaner's client may send to the API server.")
	fs.IntVar(&o.burst, "kube-api-burst", cleanup.DefaultBurst, "Burst of requests csv-cleaner's client may send to the API server.")
	fs.IntVar(&o.workers, "max-concurrent-reconciles", 4, "CSVs reconciled at once.")
	fs.BoolVar(&o.paceWrites, "pace-writes", true, "Pace the finalizer and RBAC-hold patches of managed CSVs (thousands at a first start) by the API server's latency, up to 3 × --max-concurrent-reconciles in flight, so that other clients wait less behind them.")
	fs.IntVar(&o.deleteWorkers, "delete-workers", cleanup.DefaultDeleteWorkers, "Delete requests in flight at once for one uninstall (within the client's rate limit), and finalizer patches in flight when csv-cleaner releases everything.")
	fs.DurationVar(&o.releaseTimeout, "release-timeout", owninstall.DefaultReleaseTimeout, "On SIGTERM while csv-cleaner is being uninstalled (its namespace terminating, or its CSV deleted with no CSV replacing it), how long it may take to remove every finalizer it placed; keep it below the pod's terminationGracePeriodSeconds.")
	fs.StringVar(&o.operandRole, "operand-role", rbac.OperandRole, "Aggregated ClusterRole that grants csv-cleaner its rights on operands, which it binds to its own identity at start; empty binds nothing.")
	// controller-runtime's --kubeconfig and zap's --zap-* flags are Go flags.
	gofs := flag.NewFlagSet("csv-cleaner", flag.ContinueOnError)
	if f := flag.CommandLine.Lookup("kubeconfig"); f != nil {
		gofs.Var(f.Value, f.Name, f.Usage)
	}
	o.zap = zap.Options{}
	o.zap.BindFlags(gofs)
	fs.AddGoFlagSet(gofs)
}

// newVersionCommand prints the version, the commit and the build date.
func newVersionCommand(stdout io.Writer) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit and the build date",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			b := build()
			switch output {
			case "json":
				return report.BuildJSON(stdout, b)
			case "", "text":
				_, err := fmt.Fprintln(stdout, b.Line())
				return err
			}
			return usagef("unknown output format %q (text or json)", output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "Output format: text or json.")
	return cmd
}

// build is this binary's build: what the Makefile stamped, else what the
// Go toolchain recorded (a go install or go build in a checkout records
// the commit and its date).
func build() report.Build {
	b := report.Build{Version: version, Commit: commit, Date: date, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && b.Commit == "":
				b.Commit = s.Value
			case s.Key == "vcs.time" && b.Date == "":
				b.Date = s.Value
			}
		}
		if b.Version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = strings.TrimPrefix(info.Main.Version, "v")
		}
	}
	return b
}

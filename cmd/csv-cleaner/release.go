package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

const releaseUsage = `Usage: csv-cleaner release [flags]

Removes every finalizer csv-cleaner placed that is still in the cluster:
its finalizer (and the legacy names given) from every CSV, and the RBAC hold
from every ClusterRole and ClusterRoleBinding. Run it when csv-cleaner is
gone and could not do this itself (it was killed before its grace period
ended, say). Uninstalls still under way are abandoned, with a Warning Event
on their CSV. It prints each object it changed.

`

// releaseCommand runs `csv-cleaner release`; it returns the process's exit code.
func releaseCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { _, _ = fmt.Fprint(stderr, releaseUsage); fs.PrintDefaults() }
	var (
		kubeconfig, finalizer, hold string
		legacy                      stringList
		workers                     int
		timeout                     time.Duration
	)
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Path to a kubeconfig; defaults to $KUBECONFIG, the in-cluster config, then ~/.kube/config.")
	fs.StringVar(&finalizer, "finalizer", plan.DefaultFinalizer, "csv-cleaner's finalizer on CSVs.")
	fs.Var(&legacy, "legacy-finalizer", "An earlier finalizer name of csv-cleaner's to remove too (repeatable).")
	fs.StringVar(&hold, "rbac-hold-finalizer", rbac.HoldFinalizer, "The RBAC hold's finalizer on ClusterRoles and bindings.")
	fs.IntVar(&workers, "workers", cleanup.DefaultDeleteWorkers, "Patches in flight at once.")
	fs.DurationVar(&timeout, "timeout", 10*time.Minute, "How long it may take.")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		_, _ = fmt.Fprintf(stderr, "csv-cleaner release: no arguments expected, got %v\n", fs.Args())
		return 2
	}
	cfg, err := loadConfig(kubeconfig, "csv-cleaner-release/"+version)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "csv-cleaner release: %v\n", err)
		return 1
	}
	c, err := client.New(cfg, client.Options{Scheme: cleanup.Scheme()})
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "csv-cleaner release: creating the client: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c = cleanup.Retry.Client(c) // every request retried in place while it fails transiently
	rl := cleanup.Releaser{Live: c, Writer: c, Finalizers: plan.Finalizers{Current: finalizer, Legacy: legacy},
		Hold: hold, Workers: workers, Reporter: "csv-cleaner-release"}
	released, err := rl.ReleaseOthers(ctx)
	abandoned := 0
	for _, r := range released {
		note := ""
		if r.Abandoned {
			abandoned++
			note = " (its uninstall is abandoned)"
		}
		_, _ = fmt.Fprintf(stdout, "%s%s\n", r, note)
	}
	_, _ = fmt.Fprintf(stdout, "Released %d objects (%d uninstalls abandoned).\n", len(released), abandoned)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "csv-cleaner release: %v\n", err)
		return 1
	}
	return 0
}

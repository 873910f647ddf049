package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/owninstall"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// newReleaseCommand is `csv-cleaner release`.
func newReleaseCommand(stdout io.Writer) *cobra.Command {
	var (
		kubeconfig, finalizer, hold string
		legacy                      []string
		workers                     int
		timeout                     time.Duration
	)
	cmd := &cobra.Command{
		Use:   "release",
		Short: "Remove every finalizer csv-cleaner placed, once it is gone",
		Long: `Removes every finalizer csv-cleaner placed that is still in the cluster:
its finalizer (and the legacy names given) from every CSV, and the RBAC hold
from every ClusterRole and ClusterRoleBinding. Run it when csv-cleaner is
gone and could not do this itself (it was killed before its grace period
ended, say). Uninstalls still under way are abandoned, with a Warning Event
on their CSV. It prints each object it changed.`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			return release(stdout, kubeconfig, owninstall.Releaser{Finalizers: decide.Finalizers{Current: finalizer, Legacy: legacy},
				Hold: hold, Workers: workers, Reporter: "csv-cleaner-release"}, timeout)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Path to a kubeconfig; defaults to $KUBECONFIG, the in-cluster config, then ~/.kube/config.")
	fs.StringVar(&finalizer, "finalizer", decide.DefaultFinalizer, "csv-cleaner's finalizer on CSVs.")
	fs.StringArrayVar(&legacy, "legacy-finalizer", nil, "An earlier finalizer name of csv-cleaner's to remove too (repeatable).")
	fs.StringVar(&hold, "rbac-hold-finalizer", rbac.HoldFinalizer, "The RBAC hold's finalizer on ClusterRoles and bindings.")
	fs.IntVar(&workers, "workers", cleanup.DefaultDeleteWorkers, "Patches in flight at once.")
	fs.DurationVar(&timeout, "timeout", 10*time.Minute, "How long it may take.")
	return cmd
}

// release removes the finalizers rl names from the cluster of kubeconfig
// within timeout and prints each object it changed.
func release(stdout io.Writer, kubeconfig string, rl owninstall.Releaser, timeout time.Duration) error {
	c, _, err := commandClient(kubeconfig, "csv-cleaner-release/"+version)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c = cleanup.Retry.Client(c) // every request retried in place while it fails transiently
	rl.Live, rl.Writer = c, c
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
	return err
}

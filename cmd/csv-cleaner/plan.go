package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/csvcontroller"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dryrun"
	"github.com/csv-cleaner/csv-cleaner/pkg/extensioncontroller"
	"github.com/csv-cleaner/csv-cleaner/pkg/report"
)

// newPlanCommand is `csv-cleaner plan`.
func newPlanCommand(stdout io.Writer) *cobra.Command {
	var namespace, output, kubeconfig, serviceAccount string
	cmd := &cobra.Command{
		Use:   "plan (--namespace NAMESPACE CSV | clusterextension NAME)",
		Short: "Print what an uninstall would delete and keep, and what the API server would refuse; writes nothing",
		Long: `Prints what an uninstall of the CSV, or of the OLM v1 ClusterExtension,
would delete and keep right now, and why, and what the API server would
refuse it: a right csv-cleaner lacks (a SubjectAccessReview for the
identity csv-cleaner runs as, found from the binding it makes for itself at
start, or --service-account) and a delete a webhook or an admission policy
refuses (a server-side dry-run DELETE of one object of each kind). It writes
nothing. It prints the whole plan and exits 0 when the uninstall would go
through (or the owner would be let go without deleting anything), 5 when the
verdict is Blocked.`,
		Example: `  csv-cleaner plan --namespace operators my-operator.v1.2.3
  csv-cleaner plan clusterextension my-extension -o json
  kubectl csv-cleaner plan -n operators my-operator.v1.2.3`,
		RunE: func(_ *cobra.Command, args []string) error {
			if output != "table" && output != "json" {
				return usagef("unknown output format %q (table or json)", output)
			}
			var sa *types.NamespacedName
			if serviceAccount != "" {
				parsed, ok := parseServiceAccount(serviceAccount)
				if !ok {
					return usagef("--service-account %q is not NAMESPACE/NAME", serviceAccount)
				}
				sa = &parsed
			}
			switch {
			case len(args) == 2 && isExtensionKind(args[0]):
				return printExtensionPlan(kubeconfig, args[1], output, sa, stdout)
			case len(args) > 1:
				return usagef("one CSV at a time, or clusterextension NAME; got %q", args)
			case len(args) == 0 || namespace == "":
				return usagef("a CSV name and --namespace are required")
			}
			return printPlan(kubeconfig, types.NamespacedName{Namespace: namespace, Name: args[0]}, output, sa, stdout)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&namespace, "namespace", "n", "", "Namespace of the CSV.")
	fs.StringVarP(&output, "output", "o", "table", "Output format: table or json.")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Path to a kubeconfig; defaults to $KUBECONFIG, the in-cluster config, then ~/.kube/config.")
	fs.StringVar(&serviceAccount, "service-account", "", "NAMESPACE/NAME: check the rights of this ServiceAccount rather than of the identity csv-cleaner runs as (found from the operand binding it makes for itself at start).")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// parseServiceAccount reads NAMESPACE/NAME.
func parseServiceAccount(s string) (types.NamespacedName, bool) {
	ns, name, ok := strings.Cut(s, "/")
	return types.NamespacedName{Namespace: ns, Name: name}, ok && ns != "" && name != "" && !strings.Contains(name, "/")
}

// printPlan reads the cluster of kubeconfig and prints the plan of the CSV key.
func printPlan(kubeconfig string, key types.NamespacedName, output string, sa *types.NamespacedName, stdout io.Writer) error {
	return readAndPrint(kubeconfig, output, sa, stdout, func(ctx context.Context, c client.Reader) (*dryrun.DryRun, error) {
		return csvcontroller.PlanUninstall(ctx, c, key, time.Now())
	})
}

// isExtensionKind reports whether a plan's first argument names OLM v1's ClusterExtension, as kubectl would accept it.
func isExtensionKind(arg string) bool {
	switch strings.ToLower(arg) {
	case "clusterextension", "clusterextensions", "clusterextension.olm.operatorframework.io":
		return true
	}
	return false
}

// printExtensionPlan reads the cluster of kubeconfig and prints the plan of the ClusterExtension name.
func printExtensionPlan(kubeconfig, name, output string, sa *types.NamespacedName, stdout io.Writer) error {
	return readAndPrint(kubeconfig, output, sa, stdout, func(ctx context.Context, c client.Reader) (*dryrun.DryRun, error) {
		return extensioncontroller.Plan(ctx, c, name, time.Now())
	})
}

// readAndPrint plans with a reader of the cluster of kubeconfig, foresees
// what the API server would refuse csv-cleaner (the identity it runs as,
// or the ServiceAccount sa), within two minutes, and prints the plan.
func readAndPrint(kubeconfig, output string, sa *types.NamespacedName, stdout io.Writer, planIt func(context.Context, client.Reader) (*dryrun.DryRun, error)) error {
	c, cfg, err := commandClient(kubeconfig, "csv-cleaner-plan/"+version)
	if err != nil {
		return err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the discovery client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := planIt(ctx, c)
	if err != nil {
		return err
	}
	if err := dryrun.Foresee(ctx, c, disc, d, sa); err != nil {
		return err
	}
	if err := writePlan(d, output, stdout); err != nil {
		return err
	}
	return verdictExit(d)
}

// exitPlanBlocked is the exit code of a plan, printed whole, whose verdict is Blocked.
const exitPlanBlocked = 5

// verdictExit is the plan's exit: nil when the uninstall would go through
// (Incomplete too: the run reads the kinds the plan could not, once it has
// set their conversion to None), or csv-cleaner would let the owner go
// without deleting anything.
func verdictExit(d *dryrun.DryRun) error {
	if d.Verdict == decide.VerdictBlocked {
		return exitError{code: exitPlanBlocked, err: fmt.Errorf("the uninstall would be blocked: %s", d.Reason)}
	}
	return nil
}

func writePlan(d *dryrun.DryRun, output string, stdout io.Writer) error {
	if output == "json" {
		return report.PlanJSON(stdout, d)
	}
	return report.PlanTable(stdout, d)
}

// commandClient is a subcommand's client of the cluster of kubeconfig (as
// userAgent), and its configuration.
func commandClient(kubeconfig, userAgent string) (client.Client, *rest.Config, error) {
	cfg, err := loadConfig(kubeconfig, userAgent)
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: cleanup.Scheme()})
	if err != nil {
		return nil, nil, fmt.Errorf("creating the client: %w", err)
	}
	return c, cfg, nil
}

// loadConfig loads the kubeconfig named, or else the default one.
func loadConfig(kubeconfig, userAgent string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = ctrl.GetConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cfg.UserAgent = userAgent
	// The controller's rate, whichever way the configuration was found:
	// client-go's default (5 a second) would pace a plan's reads of every kind.
	cfg.QPS, cfg.Burst = cleanup.DefaultQPS, cleanup.DefaultBurst
	cfg.Wrap(cleanup.Retry.Transport) // reads retried in place while the API server fails for a moment
	return cfg, nil
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/extension"
)

const planUsage = `Usage: csv-cleaner plan --namespace NAMESPACE [-o table|json] CSV
       csv-cleaner plan clusterextension [-o table|json] NAME

Prints what an uninstall of the CSV, or of the OLM v1 ClusterExtension,
would delete and keep right now, and why, and what the API server would
refuse it: a right csv-cleaner lacks (a SubjectAccessReview for the
identity csv-cleaner runs as, found from the binding it makes for itself at
start, or --service-account) and a delete a webhook or an admission policy
refuses (a server-side dry-run DELETE of one object of each kind). It writes
nothing.

`

// planCommand runs `csv-cleaner plan`; it returns the process's exit code.
func planCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { _, _ = fmt.Fprint(stderr, planUsage); fs.PrintDefaults() }
	var namespace, output, kubeconfig, serviceAccount string
	fs.StringVar(&namespace, "namespace", "", "Namespace of the CSV.")
	fs.StringVar(&namespace, "n", "", "Shorthand for --namespace.")
	fs.StringVar(&output, "o", "table", "Output format: table or json.")
	fs.StringVar(&output, "output", "table", "Output format: table or json.")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Path to a kubeconfig; defaults to $KUBECONFIG, the in-cluster config, then ~/.kube/config.")
	fs.StringVar(&serviceAccount, "service-account", "", "NAMESPACE/NAME: check the rights of this ServiceAccount rather than of the identity csv-cleaner runs as (found from the operand binding it makes for itself at start).")
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	var sa *types.NamespacedName
	if serviceAccount != "" {
		parsed, ok := parseServiceAccount(serviceAccount)
		if !ok {
			_, _ = fmt.Fprintf(stderr, "csv-cleaner plan: --service-account %q is not NAMESPACE/NAME\n", serviceAccount)
			return 2
		}
		sa = &parsed
	}
	if len(positional) == 2 && isExtensionKind(positional[0]) {
		if output != "table" && output != "json" {
			_, _ = fmt.Fprintf(stderr, "csv-cleaner plan: unknown output format %q (table or json)\n", output)
			return 2
		}
		if err := printExtensionPlan(kubeconfig, positional[1], output, sa, stdout); err != nil {
			_, _ = fmt.Fprintf(stderr, "csv-cleaner plan: %v\n", err)
			return 1
		}
		return 0
	}
	if len(positional) > 1 {
		_, _ = fmt.Fprintf(stderr, "csv-cleaner plan: one CSV at a time, or clusterextension NAME; got %v\n", positional)
		return 2
	}
	csv := ""
	if len(positional) == 1 {
		csv = positional[0]
	}
	switch {
	case namespace == "" || csv == "":
		_, _ = fmt.Fprintln(stderr, "csv-cleaner plan: a CSV name and --namespace are required")
		fs.Usage()
		return 2
	case output != "table" && output != "json":
		_, _ = fmt.Fprintf(stderr, "csv-cleaner plan: unknown output format %q (table or json)\n", output)
		return 2
	}
	if err := printPlan(kubeconfig, types.NamespacedName{Namespace: namespace, Name: csv}, output, sa, stdout); err != nil {
		_, _ = fmt.Fprintf(stderr, "csv-cleaner plan: %v\n", err)
		return 1
	}
	return 0
}

// parseServiceAccount reads NAMESPACE/NAME.
func parseServiceAccount(s string) (types.NamespacedName, bool) {
	ns, name, ok := strings.Cut(s, "/")
	return types.NamespacedName{Namespace: ns, Name: name}, ok && ns != "" && name != "" && !strings.Contains(name, "/")
}

// printPlan reads the cluster of kubeconfig and prints the plan of the CSV key.
func printPlan(kubeconfig string, key types.NamespacedName, output string, sa *types.NamespacedName, stdout io.Writer) error {
	return readAndPrint(kubeconfig, output, sa, stdout, func(ctx context.Context, c client.Reader) (*cleanup.DryRun, error) {
		return cleanup.PlanUninstall(ctx, c, key, time.Now())
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
	return readAndPrint(kubeconfig, output, sa, stdout, func(ctx context.Context, c client.Reader) (*cleanup.DryRun, error) {
		return extension.Plan(ctx, c, name, time.Now())
	})
}

// readAndPrint plans with a reader of the cluster of kubeconfig, foresees
// what the API server would refuse csv-cleaner (the identity it runs as,
// or the ServiceAccount sa), within two minutes, and prints the plan.
func readAndPrint(kubeconfig, output string, sa *types.NamespacedName, stdout io.Writer, planIt func(context.Context, client.Reader) (*cleanup.DryRun, error)) error {
	cfg, err := loadConfig(kubeconfig, "csv-cleaner-plan/"+version)
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: cleanup.Scheme()})
	if err != nil {
		return fmt.Errorf("creating the client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := planIt(ctx, c)
	if err != nil {
		return err
	}
	if err := cleanup.Foresee(ctx, c, d, sa); err != nil {
		return err
	}
	return writePlan(d, output, stdout)
}

func writePlan(d *cleanup.DryRun, output string, stdout io.Writer) error {
	if output == "json" {
		return d.WriteJSON(stdout)
	}
	return d.WriteTable(stdout)
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
	cfg.Wrap(cleanup.Retry.Transport) // reads retried in place while the API server fails for a moment
	return cfg, nil
}

// parseInterspersed parses flags before and after the positional
// arguments, as kubectl does.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	return positional, nil
}

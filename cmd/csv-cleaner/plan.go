package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
)

const planUsage = `Usage: csv-cleaner plan --namespace NAMESPACE [-o table|json] CSV

Prints what an uninstall of the CSV would delete and keep right now, and why.
It only reads from the cluster.

`

// planCommand runs `csv-cleaner plan`; it returns the process's exit code.
func planCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { _, _ = fmt.Fprint(stderr, planUsage); fs.PrintDefaults() }
	var namespace, output, kubeconfig string
	fs.StringVar(&namespace, "namespace", "", "Namespace of the CSV.")
	fs.StringVar(&namespace, "n", "", "Shorthand for --namespace.")
	fs.StringVar(&output, "o", "table", "Output format: table or json.")
	fs.StringVar(&output, "output", "table", "Output format: table or json.")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Path to a kubeconfig; defaults to $KUBECONFIG, the in-cluster config, then ~/.kube/config.")
	csv, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
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
	if err := printPlan(kubeconfig, types.NamespacedName{Namespace: namespace, Name: csv}, output, stdout); err != nil {
		_, _ = fmt.Fprintf(stderr, "csv-cleaner plan: %v\n", err)
		return 1
	}
	return 0
}

// printPlan reads the cluster of kubeconfig and prints the plan of the CSV key.
func printPlan(kubeconfig string, key types.NamespacedName, output string, stdout io.Writer) error {
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
	d, err := cleanup.PlanUninstall(ctx, c, key, time.Now())
	if err != nil {
		return err
	}
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

// parseInterspersed parses flags before and after the one positional
// argument, as kubectl does.
func parseInterspersed(fs *flag.FlagSet, args []string) (string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(positional) > 1 {
		_, _ = fmt.Fprintf(fs.Output(), "csv-cleaner plan: one CSV at a time, got %v\n", positional)
		return "", errors.New("too many arguments")
	}
	if len(positional) == 0 {
		return "", nil
	}
	return positional[0], nil
}

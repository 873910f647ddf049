package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCommandLine runs the command tree as a user types it, without a
// cluster: what is bad usage exits 2 with a message, help and completion
// work, and the kubectl plugin's name shows as "kubectl csv-cleaner".
func TestCommandLine(t *testing.T) {
	for _, tt := range []struct {
		name, program string
		args          []string
		code          int
		out, err      string
	}{
		{"version", "csv-cleaner", []string{"version"}, 0, "csv-cleaner " + version + " (commit ", ""},
		{"version for a program", "csv-cleaner", []string{"version", "-o", "json"}, 0, `"version": "` + version + `"`, ""},
		{"version in an unknown format", "csv-cleaner", []string{"version", "-o", "yaml"}, 2, "", `unknown output format "yaml"`},
		{"help names the subcommands", "csv-cleaner", []string{"--help"}, 0, "Available Commands:", ""},
		{"help of plan", "csv-cleaner", []string{"help", "plan"}, 0, "--service-account", ""},
		{"the controller's flags in help, --flag style", "csv-cleaner", []string{"--help"}, 0, "--pace-writes", ""},
		{"controller-runtime's and zap's flags kept", "csv-cleaner", []string{"--help"}, 0, "--zap-log-level", ""},
		{"--kubeconfig kept", "csv-cleaner", []string{"--help"}, 0, "--kubeconfig", ""},
		{"as a kubectl plugin", "/usr/local/bin/kubectl-csv_cleaner", []string{"plan", "--help"}, 0, "kubectl csv-cleaner plan", ""},
		{"shell completion", "csv-cleaner", []string{"completion", "bash"}, 0, "bash completion", ""},
		{"plan without a namespace", "csv-cleaner", []string{"plan", "my-operator.v1"}, 2, "", "a CSV name and --namespace are required"},
		{"plan with an unknown output", "csv-cleaner", []string{"plan", "-n", "ns", "my-operator.v1", "-o", "yaml"}, 2, "", `unknown output format "yaml"`},
		{"plan of two CSVs", "csv-cleaner", []string{"plan", "-n", "ns", "a", "b"}, 2, "", "one CSV at a time"},
		{"plan with a bad --service-account", "csv-cleaner", []string{"plan", "-n", "ns", "a", "--service-account", "nope"}, 2, "", "is not NAMESPACE/NAME"},
		{"help of undo says its exit codes", "csv-cleaner", []string{"help", "undo"}, 0, "3 the operator runs (nothing was restored)", ""},
		{"undo as a kubectl plugin", "/usr/local/bin/kubectl-csv_cleaner", []string{"undo", "--help"}, 0, "kubectl csv-cleaner undo", ""},
		{"undo without a namespace", "csv-cleaner", []string{"undo", "my-operator.v1"}, 2, "", "a CSV name and --namespace are required"},
		{"undo of two CSVs", "csv-cleaner", []string{"undo", "-n", "ns", "a", "b"}, 2, "", "one CSV at a time"},
		{"undo with an unknown output", "csv-cleaner", []string{"undo", "-n", "ns", "a", "-o", "yaml"}, 2, "", `unknown output format "yaml"`},
		{"an unknown flag", "csv-cleaner", []string{"--no-such-flag"}, 2, "", "unknown flag: --no-such-flag"},
		{"release takes no arguments", "csv-cleaner", []string{"release", "extra"}, 2, "", "no arguments expected"},
		{"the controller takes no arguments", "csv-cleaner", []string{"plam"}, 2, "", "no arguments expected"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := execute(tt.program, tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stdout %q, stderr %q", code, tt.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.out) {
				t.Errorf("stdout %q lacks %q", stdout.String(), tt.out)
			}
			if !strings.Contains(stderr.String(), tt.err) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.err)
			}
		})
	}
}

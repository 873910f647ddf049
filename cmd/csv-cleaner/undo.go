package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/report"
	"github.com/csv-cleaner/csv-cleaner/pkg/undo"
	"github.com/csv-cleaner/csv-cleaner/pkg/undoplan"
)

// The exit codes of `csv-cleaner undo` beside 0, 1 and 2.
const (
	// exitOperatorRunning: the operator runs; nothing was restored.
	exitOperatorRunning = 3
	// exitMissing: something the uninstall destroyed did not come back.
	exitMissing = 4
)

// newUndoCommand is `csv-cleaner undo`.
func newUndoCommand(stdout, stderr io.Writer) *cobra.Command {
	var namespace, output, kubeconfig, veleroNamespace string
	var withoutOperator, besideOperator, local bool
	var only []string
	var selector string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "undo (--namespace NAMESPACE CSV | clusterextension NAME)",
		Short: "Restore what an uninstall under a backup destroyed, from its verified Velero Backup",
		Long: `Undoes an uninstall that csv-cleaner made under a CleanupPolicy with
backup: it finds the uninstall's verified Velero Backup (from its record,
or from the Backups' labels when the record is gone) and restores with one
Velero Restore exactly what the uninstall destroyed and is missing now:
the custom resources, what the garbage collector deleted with them
(Secrets, ConfigMaps, PersistentVolumeClaims with their volumes' data from
their snapshots), the CRDs it deleted, never the old install's cluster
RBAC and webhook configurations. It follows the Restore, then checks that
every object came back and that every claim is bound to a volume made
from its snapshot, links each restored object to its owners again (Velero
strips ownerReferences), and prints a table. Run again, it finds nothing
missing and changes nothing.

Undo before you install the operator again, then install it: the undo
restores nothing while the operator runs (exit 3), which would see each
restored custom resource before what it owned is linked to it again and
could make new children beside the restored ones (docs/backup.md, "Undo,
then reinstall"). --beside-operator undoes beside it all the same.

Where csv-cleaner runs in the cluster, the undo goes through an Undo
object (cleanup.csv-cleaner.io/v1alpha1) that it creates and follows, as
velero restore create --wait does; where none answers it within 10 s (or
with --local), the undo runs from here, and says so in one line. --only and --selector restore some of the custom
resources the uninstall deleted, with what they owned; run again without
them, it brings back the rest. A Restore Velero refuses or fails (its
storage down) is never followed again: run the undo again once the cause
is gone, and it makes the next attempt.

Exit codes: 0 everything is back; 1 the undo failed (Velero's storage
location is not Available, or its Restore failed: the message says why
and what to do); 2 bad usage; 3 the operator runs (nothing was restored);
4 something did not come back, or could not be checked (its kind could
not be listed).`,
		Example: `  csv-cleaner undo --namespace operators my-operator.v1.2.3
  csv-cleaner undo clusterextension my-extension
  kubectl csv-cleaner undo -n operators my-operator.v1.2.3
  csv-cleaner undo -n operators my-operator.v1.2.3 --only Database/prod/db1`,
		RunE: func(_ *cobra.Command, args []string) error {
			if output != "table" && output != "json" {
				return usagef("unknown output format %q (table or json)", output)
			}
			owner, err := undoOwner(namespace, args)
			if err != nil {
				return err
			}
			sel, err := selectionOf(only, selector)
			if err != nil {
				return err
			}
			o := undo.Options{Owner: owner, VeleroNamespace: veleroNamespace, BesideOperator: besideOperator, Selection: sel, Progress: stderr}
			return runUndo(kubeconfig, o, undoRun{timeout: timeout, local: local, output: output}, stdout)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&namespace, "namespace", "n", "", "Namespace of the CSV.")
	fs.StringVarP(&output, "output", "o", "table", "Output format: table or json.")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Path to a kubeconfig; defaults to $KUBECONFIG, the in-cluster config, then ~/.kube/config.")
	fs.StringVar(&veleroNamespace, "velero-namespace", cleanupv1alpha1.DefaultVeleroNamespace, "Velero's namespace, where the Backups are looked for when the uninstall's record is gone.")
	fs.BoolVar(&withoutOperator, "without-operator", false, "What the undo always does now: it runs without the operator, restoring the CRDs the uninstall deleted too.")
	_ = fs.MarkDeprecated("without-operator", "the undo always runs without the operator now: undo, then install the operator again")
	fs.BoolVar(&besideOperator, "beside-operator", false, "Undo while the operator runs: it then sees each restored custom resource before what it owned is linked to it again (docs/backup.md, \"Undo, then reinstall\").")
	fs.StringArrayVar(&only, "only", nil, "Restore only this custom resource the uninstall deleted, KIND/NAMESPACE/NAME (KIND/NAME when cluster-scoped; KIND as Kind, Kind.group or plural.group), with what it owned; repeatable.")
	fs.StringVar(&selector, "selector", "", "Restore only the custom resources the uninstall deleted whose labels matched this selector, with what they owned.")
	fs.DurationVar(&timeout, "timeout", 30*time.Minute, "How long to follow the undo; it goes on after, and undo run again follows it.")
	fs.BoolVar(&local, "local", false, "Undo from here, not through an Undo object that csv-cleaner in the cluster runs.")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// undoOwner is the owner whose uninstall `csv-cleaner undo` undoes, from
// its --namespace and arguments.
func undoOwner(namespace string, args []string) (decide.Owner, error) {
	switch {
	case len(args) == 2 && isExtensionKind(args[0]):
		return decide.Owner{Kind: decide.KindExtension, Name: args[1]}, nil
	case len(args) > 1:
		return decide.Owner{}, usagef("one CSV at a time, or clusterextension NAME; got %q", args)
	case len(args) == 0 || namespace == "":
		return decide.Owner{}, usagef("a CSV name and --namespace are required")
	}
	return decide.Owner{Kind: decide.KindCSV, Namespace: namespace, Name: args[0]}, nil
}

// undoCommandLine is the command that undoes the uninstall of owner, as
// the messages of an uninstall under a backup say it (undoOwner reads it
// back).
func undoCommandLine(owner decide.Owner) string {
	if owner.Extension() {
		return "csv-cleaner undo clusterextension " + owner.Name
	}
	return fmt.Sprintf("csv-cleaner undo --namespace %s %s", owner.Namespace, owner.Name)
}

// undoRun is how `csv-cleaner undo` runs: how long it follows, whether
// it may go through an Undo object, and how it prints.
type undoRun struct {
	timeout time.Duration
	local   bool
	output  string
}

// answerWithin is how long a new Undo may go unanswered before the undo
// runs from here.
const answerWithin = 10 * time.Second

// runUndo undoes the uninstall o names on the cluster of kubeconfig,
// through an Undo object where csv-cleaner runs there, and prints what
// came back.
func runUndo(kubeconfig string, o undo.Options, how undoRun, stdout io.Writer) error {
	c, _, err := commandClient(kubeconfig, "csv-cleaner-undo/"+version)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), how.timeout)
	defer cancel()
	var res *undo.Result
	here := "--local"
	if !how.local {
		res, _, err = undo.ThroughObject(ctx, c, o, answerWithin)
		if none := (*undo.NoControllerError)(nil); errors.As(err, &none) {
			here, err = none.Why, nil
		} else {
			here = ""
		}
	}
	if here != "" {
		_, _ = fmt.Fprintf(o.Progress, "Undoing from here, not through an Undo object: %s\n", here)
		res, err = undo.Run(ctx, c, o)
	}
	if running := (*undo.OperatorRunningError)(nil); errors.As(err, &running) {
		return exitError{code: exitOperatorRunning, err: err}
	}
	if sel := (*undo.SelectionError)(nil); errors.As(err, &sel) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	if how.output == "json" {
		err = report.UndoJSON(stdout, &res.Outcome)
	} else {
		err = report.UndoTable(stdout, &res.Outcome)
	}
	if err != nil {
		return err
	}
	if !o.BesideOperator {
		_, _ = fmt.Fprintln(o.Progress, reinstallNow(o.Owner))
	}
	if n := res.Missing(); n > 0 {
		return exitError{code: exitMissing, err: fmt.Errorf("%d of the %d objects the uninstall destroyed did not come back as they were, or could not be checked (see the table)", n, len(res.Rows))}
	}
	return nil
}

// reinstallNow says that the operator may run again, once the undo has
// linked what it restored.
func reinstallNow(owner decide.Owner) string {
	what := "its Subscription in namespace " + owner.Namespace
	if owner.Extension() {
		what = "the ClusterExtension " + owner.Name
	}
	return fmt.Sprintf("What came back is linked to its owners: the operator may run again now. Install it again (%s), or scale its Deployment back up if you stopped it for the undo.", what)
}

// selectionOf reads --only and --selector.
func selectionOf(only []string, selector string) (undoplan.UndoSelection, error) {
	var sel undoplan.UndoSelection
	for _, o := range only {
		name, err := undoplan.ParseObjectName(o)
		if err != nil {
			return sel, usagef("--only: %v", err)
		}
		sel.Only = append(sel.Only, name)
	}
	if selector != "" {
		s, err := labels.Parse(selector)
		if err != nil {
			return sel, usagef("--selector: %v", err)
		}
		sel.Selector = s
	}
	return sel, nil
}

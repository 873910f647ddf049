package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var db = fixtures.CRD{Group: "demo.example.com", Kind: "Database", Plural: "databases"}

var install = fixtures.Install{
	Namespace: "operators",
	CSVName:   "database-operator.v1.2.0",
	Targets:   []string{"team-a", "team-b"},
	CRDs:      []fixtures.CRD{db},
}

// object is one thing the demo watches, with what should become of it and why.
type object struct {
	kind, name string
	get        func(context.Context, client.Client) error
	deleted    bool
	why        string
}

func main() {
	binDir := flag.String("bin-dir", filepath.Join(controlplane.RepoRoot(), "bin"), "folder with csv-cleaner, etcd and kube-apiserver (and, for --undo, Velero and the CSI sidecars)")
	undo := flag.Bool("undo", false, "the undo's round trip (make demo-undo) rather than the uninstall scaled to zero (make demo)")
	flag.Parse()
	start := time.Now()
	demo := run
	if *undo {
		demo = runUndo
	}
	if err := demo(*binDir); err != nil {
		fmt.Fprintf(os.Stderr, "\ndemo failed: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("\nDemo finished in %s; the temporary control plane is removed.\n", time.Since(start).Round(100*time.Millisecond))
}

func step(format string, args ...any) { fmt.Printf("\n==> "+format+"\n", args...) }

func run(binDir string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	step("Starting a local control plane: etcd, kube-apiserver and kube-controller-manager (the garbage collector) from %s", binDir)
	cp, err := controlplane.Start(controlplane.Options{BinDir: binDir, ControllerManager: true, OLMv1: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cp.Stop()) }()
	c, err := client.New(cp.Config, client.Options{Scheme: cleanup.Scheme()})
	if err != nil {
		return err
	}
	fmt.Println("    OLM's CRDs (v0's, and v1's ClusterExtension), and csv-cleaner's CRDs are installed.")

	step("Creating a CleanupPolicy that manages every CSV (deleting operands is opt-in)")
	policy := &cleanupv1alpha1.CleanupPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if err := c.Create(ctx, policy); err != nil {
		return err
	}

	step("Creating an operator install as OLM leaves it: %s in namespace %s, targeting %s", install.CSVName, install.Namespace, strings.Join(install.Targets, ", "))
	if _, err := install.Create(ctx, c); err != nil {
		return err
	}
	objects, err := populate(ctx, c)
	if err != nil {
		return err
	}
	for _, o := range objects {
		fmt.Printf("    %-20s %s\n", o.kind, o.name)
	}

	step("Starting bin/csv-cleaner as a separate process (logs: %s)", filepath.Join(cp.LogDir, "csv-cleaner.log"))
	proc, err := startCleaner(binDir, cp.Kubeconfig, cp.LogDir)
	if err != nil {
		return err
	}
	if err := waitFor(ctx, "csv-cleaner's finalizer on the CSV", func(ctx context.Context) (bool, error) {
		csv, err := getCSV(ctx, c)
		return err == nil && contains(csv.Finalizers, decide.DefaultFinalizer), client.IgnoreNotFound(err)
	}); err != nil {
		return err
	}
	fmt.Printf("    The CSV carries %s.\n", decide.DefaultFinalizer)

	step("Scaling csv-cleaner to zero (SIGTERM) and deleting the CSV")
	if err := stopCleaner(proc); err != nil {
		return err
	}
	csv, err := getCSV(ctx, c)
	if err != nil {
		return err
	}
	// An operand created in the deletion's second would be kept (CreatedAfterDeletion).
	fixtures.WaitNextSecond(time.Now())
	if err := c.Delete(ctx, csv); err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // let a person see that nothing moves while csv-cleaner is down
	csv, err = getCSV(ctx, c)
	if err != nil {
		return fmt.Errorf("the CSV must stay while csv-cleaner is down: %w", err)
	}
	fmt.Printf("    The CSV is still there: deletionTimestamp %s, finalizers %v.\n", csv.DeletionTimestamp.UTC().Format(time.RFC3339), csv.Finalizers)
	for _, o := range objects {
		if err := o.get(ctx, c); err != nil {
			return fmt.Errorf("%s %s went while csv-cleaner was down: %w", o.kind, o.name, err)
		}
	}
	fmt.Printf("    All %d objects are still there: nothing was removed.\n", len(objects))

	step("Scaling csv-cleaner up again and following the uninstall record")
	if proc, err = startCleaner(binDir, cp.Kubeconfig, cp.LogDir); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stopCleaner(proc)) }()
	rec := &cleanupv1alpha1.CSVCleanup{}
	if err := followRecord(ctx, c, install.Key(), rec, "csvcleanup", func() (cleanupv1alpha1.Phase, int32, string) {
		return rec.Status.Phase, rec.Status.Remaining, rec.Status.Message
	}); err != nil {
		return err
	}
	if err := waitFor(ctx, "the CSV to be gone", func(ctx context.Context) (bool, error) {
		_, err := getCSV(ctx, c)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}); err != nil {
		return err
	}
	fmt.Println("    The CSV is gone: csv-cleaner released its finalizer last.")
	if err := report(ctx, c, objects); err != nil {
		return err
	}
	return runExtension(ctx, c)
}

// populate creates what the uninstall must delete and, for contrast, what it must keep.
func populate(ctx context.Context, c client.Client) ([]object, error) {
	key := install.Key()
	var objects []object
	operand := func(ns, name string, deleted bool, why string) error {
		if err := c.Create(ctx, fixtures.Namespace(ns)); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
		u := fixtures.Operand(db, ns, name)
		if err := c.Create(ctx, u); err != nil {
			return err
		}
		objects = append(objects, object{kind: "Database", name: ns + "/" + name, deleted: deleted, why: why, get: getter(u)})
		return nil
	}
	if err := errors.Join(
		operand("team-a", "orders", true, "operand in a target namespace"),
		operand("team-b", "billing", true, "operand in a target namespace"),
		operand("team-c", "analytics", false, "OutsideTargets: team-c is not a target of the OperatorGroup"),
	); err != nil {
		return nil, err
	}
	role := fixtures.OwnedClusterRole("database-operator.v1.2.0-7d9c5", key)
	binding := fixtures.OwnedClusterRoleBinding(role.Name, key)
	other := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "monitoring-view", Labels: map[string]string{"olm.owner": key.Name}}}
	for _, o := range []client.Object{role, binding, other} {
		if err := c.Create(ctx, o); err != nil {
			return nil, err
		}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: db.Name()}}
	objects = append(objects,
		object{kind: "ClusterRole", name: role.Name, deleted: true, why: "carries all three OLM owner labels of the CSV", get: getter(role)},
		object{kind: "ClusterRoleBinding", name: binding.Name, deleted: true, why: "carries all three OLM owner labels of the CSV", get: getter(binding)},
		object{kind: "ClusterRole", name: other.Name, deleted: false, why: "olm.owner alone is not ownership: the three labels must match", get: getter(other)},
		object{kind: "CRD", name: crd.Name, deleted: false, why: "crds: Orphan is the policy's default", get: getter(crd)},
	)
	return objects, nil
}

func getter(obj client.Object) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		fresh := obj.DeepCopyObject().(client.Object)
		if u, ok := obj.(*unstructured.Unstructured); ok {
			fresh = &unstructured.Unstructured{}
			fresh.GetObjectKind().SetGroupVersionKind(u.GroupVersionKind())
		}
		return c.Get(ctx, client.ObjectKeyFromObject(obj), fresh)
	}
}

// followRecord reads an uninstall record (rec, at key) until it is
// Completed, and prints each new state that status reads of it.
func followRecord(ctx context.Context, c client.Client, key client.ObjectKey, rec client.Object, name string,
	status func() (cleanupv1alpha1.Phase, int32, string)) error {
	last := ""
	return waitFor(ctx, "the "+name+" record to reach Completed", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, rec); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		phase, remaining, message := status()
		line := fmt.Sprintf("phase %-9s remaining %d  %s", phase, remaining, message)
		if line != last && phase != "" {
			fmt.Printf("    %s/%s: %s\n", name, key.Name, line)
			last = line
		}
		return phase == cleanupv1alpha1.PhaseCompleted, nil
	})
}

// report prints what the CSV's uninstall deleted and kept, and its record's
// counts, and fails when it is not what the rules promise.
func report(ctx context.Context, c client.Client, objects []object) error {
	if err := reportObjects(ctx, c, objects); err != nil {
		return err
	}
	rec := &cleanupv1alpha1.CSVCleanup{}
	if err := c.Get(ctx, install.Key(), rec); err != nil {
		return err
	}
	fmt.Printf("\n    csvcleanup/%s (kubectl get csvcleanups -n %s):\n", rec.Name, rec.Namespace)
	rows := [][]string{{"KIND", "FOUND", "DELETED", "REMAINING", "KEPT"}}
	for _, k := range rec.Status.Counts {
		var kept []string
		for _, r := range k.Kept {
			kept = append(kept, fmt.Sprintf("%s=%d", r.Reason, r.Count))
		}
		rows = append(rows, []string{k.Kind, fmt.Sprint(k.Found), fmt.Sprint(k.Deleted), fmt.Sprint(k.Remaining), strings.Join(kept, ",")})
	}
	return printTable(rows)
}

// reportObjects prints what an uninstall deleted and kept, and fails when it is not what the rules promise.
func reportObjects(ctx context.Context, c client.Client, objects []object) error {
	step("What the uninstall deleted and kept")
	rows := [][]string{{"RESULT", "KIND", "NAME", "WHY"}}
	var wrong []string
	sort.SliceStable(objects, func(i, j int) bool { return objects[i].deleted && !objects[j].deleted })
	for _, o := range objects {
		err := o.get(ctx, c)
		gone := apierrors.IsNotFound(err)
		if err != nil && !gone {
			return err
		}
		result := "kept"
		if gone {
			result = "deleted"
		}
		rows = append(rows, []string{result, o.kind, o.name, o.why})
		if gone != o.deleted {
			wrong = append(wrong, fmt.Sprintf("%s %s was %s", o.kind, o.name, result))
		}
	}
	if err := printTable(rows); err != nil {
		return err
	}
	if len(wrong) > 0 {
		return fmt.Errorf("unexpected end state: %s", strings.Join(wrong, "; "))
	}
	return nil
}

// printTable prints rows as aligned columns, indented.
func printTable(rows [][]string) error {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		if _, err := fmt.Fprintln(w, "    "+strings.Join(r, "\t")); err != nil {
			return err
		}
	}
	return w.Flush()
}

func getCSV(ctx context.Context, c client.Client) (*operatorsv1alpha1.ClusterServiceVersion, error) {
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	return csv, c.Get(ctx, install.Key(), csv)
}

func waitFor(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	if err := controlplane.WaitFor(ctx, 2*time.Minute, 200*time.Millisecond, cond); err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// startCleaner runs bin/csv-cleaner as a separate process.
func startCleaner(binDir, kubeconfig, logDir string) (*controlplane.Process, error) {
	p, err := controlplane.StartProcess("csv-cleaner", filepath.Join(binDir, "csv-cleaner"),
		// The demo runs csv-cleaner as the control plane's admin, who needs no operand role.
		[]string{"--kubeconfig=" + kubeconfig, "--metrics-bind-address=0", "--health-probe-bind-address=0", "--operand-role="}, nil, logDir)
	if err != nil {
		return nil, fmt.Errorf("%w (run 'make build')", err)
	}
	fmt.Printf("    csv-cleaner running, pid %d.\n", p.Pid())
	return p, nil
}

// stopCleaner scales csv-cleaner to zero: SIGTERM, and a clean exit.
func stopCleaner(p *controlplane.Process) error {
	if err := p.Stop(30 * time.Second); err != nil {
		return err
	}
	fmt.Printf("    csv-cleaner (pid %d) stopped cleanly.\n", p.Pid())
	return nil
}

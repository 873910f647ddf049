package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// The versions hack/control-plane/kubectl-operator and hack/control-plane/operator-sdk pin.
const (
	KubectlOperatorVersion = "v0.6.0"
	OperatorSDKVersion     = "v1.33.0"
)

// Tool is a command users run today to uninstall an operator, built into
// bin/ by `make bench-tools` (hack/control-plane/<Bin>, pinned).
type Tool struct {
	// Name starts the tool's figures' keys.
	Name string
	Bin  string
	// Command is what a user types, for package pkg in namespace ns; it
	// runs with KUBECONFIG naming a cluster-admin's kubeconfig.
	Command func(pkg, ns string) []string
}

// timeoutFlag raises each tool's timeout: its default (1 or 2 minutes) ends
// an uninstall of 1,000 operands long before it is done.
const timeoutFlag = "--timeout=60m"

// KubectlOperator is kubectl-operator v0.6.0's uninstall, operands deleted:
// it finds the CSV through the Operator object and deletes each operand in
// the OperatorGroup's target namespaces, waiting for each to be gone.
var KubectlOperator = Tool{Name: "kubectl_operator", Bin: "kubectl-operator",
	Command: func(pkg, ns string) []string {
		return []string{"kubectl", "operator", "uninstall", pkg, "--namespace", ns, "--operand-strategy=delete", timeoutFlag}
	},
}

// OperatorSDKCleanup is operator-sdk v1.33.0's cleanup: it deletes the
// Subscription, then the CRDs the CSV's status lists and the CSV, waiting
// for each; kube-apiserver deletes a CRD's instances with it, in every
// namespace.
var OperatorSDKCleanup = Tool{Name: "operator_sdk_cleanup", Bin: "operator-sdk",
	Command: func(pkg, ns string) []string {
		return []string{"operator-sdk", "cleanup", pkg, "--namespace", ns, timeoutFlag}
	},
}

// SideBySide is one tool's uninstall against the per-object floor.
type SideBySide struct {
	Tool     string
	Operands int
	// Took runs from the command's start to its exit, every operand and the CSV gone.
	Took time.Duration
	// Floor is the per-object floor (perObjectFloor) on an identical set, in the same run.
	Floor time.Duration
	// Command is the command line, as a user types it.
	Command string
	// Deleted counts the lines in which it reports an object deleted.
	Deleted int
}

// Ratio is the tool's time over the per-object floor's.
func (k SideBySide) Ratio() float64 { return k.Took.Seconds() / k.Floor.Seconds() }

// MeasureSideBySide times tool's uninstall of an operator as OLM leaves it (3
// owned CRDs, n operands over 100 target namespaces) against the per-object
// floor on an identical set that nobody owns. No csv-cleaner runs.
func (e *Env) MeasureSideBySide(ctx context.Context, tool Tool, n int) (SideBySide, error) {
	res := SideBySide{Tool: tool.Name, Operands: n}
	bin := filepath.Join(controlplane.RepoRoot(), "bin", tool.Bin)
	if _, err := os.Stat(bin); err != nil {
		return res, fmt.Errorf("%s is not built (run `make bench-tools`): %w", tool.Bin, err)
	}
	id := strings.ReplaceAll(tool.Bin, "-", "") + fmt.Sprint(n)
	ns, err := e.namespaces(ctx, "bench-target", targetNamespaces)
	if err != nil {
		return res, err
	}
	in := fixtures.Install{Namespace: id, CSVName: id + ".v1.0.0", Targets: ns, CRDs: crds(id)}
	floorCRDs := crds(id + "-floor")
	if _, err := in.Create(ctx, e.Client); err != nil {
		return res, err
	}
	if err := e.subscribed(ctx, in, id); err != nil {
		return res, err
	}
	for _, c := range floorCRDs {
		if err := fixtures.CreateCRD(ctx, e.Client, in.CRDObject(c)); err != nil {
			return res, err
		}
	}
	for _, set := range [][]fixtures.CRD{in.CRDs, floorCRDs} {
		if err := e.operands(ctx, set, ns, n); err != nil {
			return res, err
		}
	}
	if res.Floor, err = e.perObjectFloor(ctx, floorCRDs); err != nil {
		return res, err
	}

	line := tool.Command(id, id)
	res.Command = strings.Join(line, " ")
	args := line[1:]
	if line[0] == "kubectl" { // a kubectl plugin is its own binary
		args = line[2:]
	}
	logPath := filepath.Join(e.LogDir, tool.Bin+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return res, err
	}
	defer func() { _ = logFile.Close() }()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+e.FloorID.Kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return res, fmt.Errorf("%s (see %s): %w", res.Command, logPath, err)
	}
	res.Took = time.Since(start)

	out, err := os.ReadFile(logPath)
	if err != nil {
		return res, err
	}
	res.Deleted = strings.Count(string(out), " deleted")
	if err := e.uninstalled(ctx, in, id); err != nil {
		return res, fmt.Errorf("after %s: %w", res.Command, err)
	}
	for _, c := range append(in.CRDs, floorCRDs...) {
		if err := e.Client.Delete(ctx, in.CRDObject(c)); client.IgnoreNotFound(err) != nil {
			return res, fmt.Errorf("deleting CRD %s: %w", c.Name(), err)
		}
	}
	return res, nil
}

// subscribed adds what kubectl-operator starts from: the install's
// Subscription to package pkg, with the CSV as its installed CSV, and the
// Operator pkg.<namespace> whose status.components.refs names the CSV.
func (e *Env) subscribed(ctx context.Context, in fixtures.Install, pkg string) error {
	sub := &operatorsv1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Namespace: in.Namespace, Name: pkg},
		Spec:       &operatorsv1alpha1.SubscriptionSpec{CatalogSource: "bench", CatalogSourceNamespace: in.Namespace, Package: pkg, Channel: "stable"},
	}
	if err := e.Client.Create(ctx, sub); err != nil {
		return fmt.Errorf("creating Subscription %s: %w", pkg, err)
	}
	base := sub.DeepCopy()
	sub.Status = operatorsv1alpha1.SubscriptionStatus{InstalledCSV: in.CSVName, CurrentCSV: in.CSVName, State: operatorsv1alpha1.SubscriptionStateAtLatest, LastUpdated: metav1.Now()}
	if err := e.Client.Status().Patch(ctx, sub, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("setting Subscription %s's status: %w", pkg, err)
	}
	// OLM's operator controller names the Operator <package>.<namespace> and
	// selects its components by this label.
	label := "operators.coreos.com/" + pkg + "." + in.Namespace
	op := &operatorsv1.Operator{ObjectMeta: metav1.ObjectMeta{Name: pkg + "." + in.Namespace}}
	if err := e.Client.Create(ctx, op); err != nil {
		return fmt.Errorf("creating Operator %s: %w", op.Name, err)
	}
	opBase := op.DeepCopy()
	op.Status.Components = &operatorsv1.Components{
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: label, Operator: metav1.LabelSelectorOpExists}}},
		Refs: []operatorsv1.RichReference{{ObjectReference: &corev1.ObjectReference{
			APIVersion: operatorsv1alpha1.SchemeGroupVersion.String(), Kind: operatorsv1alpha1.ClusterServiceVersionKind,
			Namespace: in.Namespace, Name: in.CSVName,
		}}},
	}
	if err := e.Client.Status().Patch(ctx, op, client.MergeFrom(opBase)); err != nil {
		return fmt.Errorf("setting Operator %s's status: %w", op.Name, err)
	}
	// OLM lists the owned CRDs among the requirements it found present.
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := e.Client.Get(ctx, in.Key(), csv); err != nil {
		return err
	}
	csvBase := csv.DeepCopy()
	for _, c := range in.CRDs {
		csv.Status.RequirementStatus = append(csv.Status.RequirementStatus, operatorsv1alpha1.RequirementStatus{
			Group: apiextensionsv1.GroupName, Version: "v1", Kind: "CustomResourceDefinition", Name: c.Name(),
			Status: operatorsv1alpha1.RequirementStatusReasonPresent, Message: "CRD is present and Established condition is true",
		})
	}
	if err := e.Client.Status().Patch(ctx, csv, client.MergeFrom(csvBase)); err != nil {
		return fmt.Errorf("setting CSV %s's requirement status: %w", in.Key(), err)
	}
	return nil
}

// uninstalled checks what a user checks after an uninstall: no operand left,
// the CSV and the Subscription sub gone.
func (e *Env) uninstalled(ctx context.Context, in fixtures.Install, sub string) error {
	var served []fixtures.CRD // a deleted CRD has no instances left
	for _, c := range in.CRDs {
		err := e.Client.Get(ctx, client.ObjectKey{Name: c.Name()}, &apiextensionsv1.CustomResourceDefinition{})
		switch {
		case err == nil:
			served = append(served, c)
		case !apierrors.IsNotFound(err):
			return err
		}
	}
	left, err := e.count(ctx, served)
	if err != nil {
		return fmt.Errorf("counting the operands left: %w", err)
	}
	var errs []error
	if left > 0 {
		errs = append(errs, fmt.Errorf("%d operands left", left))
	}
	for name, obj := range map[string]client.Object{in.CSVName: &operatorsv1alpha1.ClusterServiceVersion{}, sub: &operatorsv1alpha1.Subscription{}} {
		err := e.Client.Get(ctx, client.ObjectKey{Namespace: in.Namespace, Name: name}, obj)
		switch {
		case err == nil:
			errs = append(errs, fmt.Errorf("%T %s/%s is still there", obj, in.Namespace, name))
		case !apierrors.IsNotFound(err):
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

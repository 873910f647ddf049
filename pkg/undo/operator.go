package undo

import (
	"context"
	"fmt"
	"slices"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide/olmv1"
	"github.com/csv-cleaner/csv-cleaner/pkg/undoplan"
)

// OperatorRunningError says that the operator that serves the uninstall's
// CRDs runs, or is about to: the undo made no Restore beside it.
type OperatorRunningError struct{ Message string }

func (e *OperatorRunningError) Error() string { return e.Message }

// operatorRunning says how the operator that serves crds (the CRDs whose
// instances the uninstall destroyed) runs now, or the owner's if it is
// back; "" when it does not (undoplan.OperatorRunning).
func operatorRunning(ctx context.Context, c client.Client, o decide.Owner, crds []string) (string, error) {
	ws, err := csvWorkloads(ctx, c, o, crds)
	if err != nil {
		return "", err
	}
	ext, err := extensionWorkloads(ctx, c, o, crds)
	if err != nil {
		return "", err
	}
	return undoplan.OperatorRunning(append(ws, ext...)), nil
}

// csvWorkloads are the Deployments of each CSV (not a copy) that owns one
// of crds, or has the owner's name and namespace: those its install
// strategy names, in its namespace, each absent one about to be made
// unless the CSV is being deleted.
func csvWorkloads(ctx context.Context, c client.Client, o decide.Owner, crds []string) ([]undoplan.Workload, error) {
	csvs := &operatorsv1alpha1.ClusterServiceVersionList{}
	switch err := c.List(ctx, csvs); {
	case meta.IsNoMatchError(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("listing the CSVs, to tell whether the operator runs: %w", err)
	}
	var out []undoplan.Workload
	byNamespace := map[string]map[string]*appsv1.Deployment{}
	for i := range csvs.Items {
		csv := &csvs.Items[i]
		owner := o.Kind == decide.KindCSV && csv.Namespace == o.Namespace && csv.Name == o.Name
		if csv.IsCopied() || !owner && !ownsAny(csv, crds) {
			continue
		}
		deployments, ok := byNamespace[csv.Namespace]
		if !ok {
			var err error
			if deployments, err = deploymentsIn(ctx, c, client.InNamespace(csv.Namespace)); err != nil {
				return nil, err
			}
			byNamespace[csv.Namespace] = deployments
		}
		for _, spec := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
			w := undoplan.Workload{Deployment: csv.Namespace + "/" + spec.Name, Of: "CSV " + csv.Namespace + "/" + csv.Name}
			if d := deployments[w.Deployment]; d != nil {
				w.Replicas, w.Pods = d.Spec.Replicas, d.Status.Replicas
			} else if csv.DeletionTimestamp == nil {
				w.Absent = true
			} else {
				continue
			}
			out = append(out, w)
		}
	}
	return out, nil
}

// ownsAny reports whether the CSV owns one of crds.
func ownsAny(csv *operatorsv1alpha1.ClusterServiceVersion, crds []string) bool {
	return slices.ContainsFunc(csv.Spec.CustomResourceDefinitions.Owned, func(d operatorsv1alpha1.CRDDescription) bool { return slices.Contains(crds, d.Name) })
}

// extensionWorkloads are the Deployments operator-controller made for each
// ClusterExtension that owns one of crds (its owner labels on the CRD), or
// is the owner: found by its owner labels; a ClusterExtension there
// without one is about to make it.
func extensionWorkloads(ctx context.Context, c client.Client, o decide.Owner, crds []string) ([]undoplan.Workload, error) {
	var names []string
	if o.Extension() {
		names = append(names, o.Name)
	}
	for _, name := range crds {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		switch err := c.Get(ctx, client.ObjectKey{Name: name}, crd); {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("reading CRD %s: %w", name, err)
		}
		if crd.Labels[olmv1.ExtensionOwnerKindLabel] == ocv1.ClusterExtensionKind && !slices.Contains(names, crd.Labels[olmv1.ExtensionOwnerNameLabel]) {
			names = append(names, crd.Labels[olmv1.ExtensionOwnerNameLabel])
		}
	}
	var out []undoplan.Workload
	for _, name := range names {
		deployments, err := deploymentsIn(ctx, c, client.MatchingLabels{olmv1.ExtensionOwnerKindLabel: ocv1.ClusterExtensionKind, olmv1.ExtensionOwnerNameLabel: name})
		if err != nil {
			return nil, err
		}
		of := "ClusterExtension " + name
		for key, d := range deployments {
			out = append(out, undoplan.Workload{Deployment: key, Of: of, OLMv1: true, Replicas: d.Spec.Replicas, Pods: d.Status.Replicas})
		}
		if len(deployments) > 0 {
			continue
		}
		ext := &ocv1.ClusterExtension{}
		switch err := c.Get(ctx, client.ObjectKey{Name: name}, ext); {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		case err != nil:
			return nil, fmt.Errorf("reading ClusterExtension %s: %w", name, err)
		case ext.DeletionTimestamp == nil:
			out = append(out, undoplan.Workload{Of: of, OLMv1: true, Absent: true})
		}
	}
	return out, nil
}

// deploymentsIn are the Deployments a LIST with opts finds, by namespace/name.
func deploymentsIn(ctx context.Context, c client.Client, opts ...client.ListOption) (map[string]*appsv1.Deployment, error) {
	list := &appsv1.DeploymentList{}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("listing Deployments, to tell whether the operator runs: %w", err)
	}
	out := make(map[string]*appsv1.Deployment, len(list.Items))
	for i := range list.Items {
		d := &list.Items[i]
		out[d.Namespace+"/"+d.Name] = d
	}
	return out, nil
}

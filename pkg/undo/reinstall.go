package undo

import (
	"context"
	"fmt"
	"slices"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide/restore"
	"github.com/csv-cleaner/csv-cleaner/pkg/destroyed"
)

// NotReinstalledError says what to reinstall before an undo: the operator
// must run and serve its CRDs again, or its objects come back to nobody.
type NotReinstalledError struct{ Message string }

func (e *NotReinstalledError) Error() string { return e.Message }

// checkReinstalled checks that the owner's operator is installed again:
// for a CSV, a Succeeded CSV in its namespace that owns every CRD whose
// instances the uninstall destroyed; for a ClusterExtension, the extension
// of its name Installed; and each of those CRDs established.
func checkReinstalled(ctx context.Context, c client.Client, o decide.Owner, d *destroyed.Record) error {
	crds := restore.CustomResources(d.Deleted, d.Dependents)
	var missing []string
	for _, name := range crds {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		switch err := c.Get(ctx, client.ObjectKey{Name: name}, crd); {
		case apierrors.IsNotFound(err):
			missing = append(missing, name+" (absent)")
		case err != nil:
			return fmt.Errorf("reading CRD %s: %w", name, err)
		case !established(crd):
			missing = append(missing, name+" (not established)")
		}
	}
	var why string
	if o.Extension() {
		installed, err := extensionInstalled(ctx, c, o.Name)
		if err != nil {
			return err
		}
		if !installed {
			why = fmt.Sprintf("ClusterExtension %s is not installed again", o.Name)
		}
	} else {
		owner, err := owningCSV(ctx, c, o.Namespace, crds)
		if err != nil {
			return err
		}
		if owner == "" {
			why = fmt.Sprintf("no Succeeded CSV in namespace %s owns %s", o.Namespace, strings.Join(crds, ", "))
		}
	}
	if len(missing) > 0 {
		why = strings.TrimPrefix(why+"; its CRDs are not served: "+strings.Join(missing, ", "), "; ")
	}
	if why == "" {
		return nil
	}
	what := fmt.Sprintf("its Subscription in namespace %s", o.Namespace)
	if o.Extension() {
		what = "the ClusterExtension " + o.Name
	}
	return &NotReinstalledError{Message: fmt.Sprintf("the operator of %s is not installed again (%s): reinstall it (%s), wait until it runs, then undo again; nothing was restored. --without-operator restores the CRDs and objects without it", o, why, what)}
}

// established reports whether a CRD's Established condition is True.
func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// owningCSV is a Succeeded CSV of namespace, not being deleted, that owns
// every CRD of crds; "" when there is none.
func owningCSV(ctx context.Context, c client.Client, namespace string, crds []string) (string, error) {
	list := &operatorsv1alpha1.ClusterServiceVersionList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		if meta.IsNoMatchError(err) {
			return "", nil
		}
		return "", fmt.Errorf("listing the CSVs of namespace %s: %w", namespace, err)
	}
	for _, csv := range list.Items {
		if csv.DeletionTimestamp != nil || csv.Status.Phase != operatorsv1alpha1.CSVPhaseSucceeded || csv.IsCopied() {
			continue
		}
		owned := map[string]bool{}
		for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
			owned[d.Name] = true
		}
		if !slices.ContainsFunc(crds, func(n string) bool { return !owned[n] }) {
			return csv.Name, nil
		}
	}
	return "", nil
}

// extensionInstalled reports whether the ClusterExtension name exists, is
// not being deleted, and says Installed.
func extensionInstalled(ctx context.Context, c client.Client, name string) (bool, error) {
	ext := &ocv1.ClusterExtension{}
	switch err := c.Get(ctx, client.ObjectKey{Name: name}, ext); {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading ClusterExtension %s: %w", name, err)
	}
	return ext.DeletionTimestamp == nil && meta.IsStatusConditionTrue(ext.Status.Conditions, ocv1.TypeInstalled), nil
}

package undo

import (
	"context"
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// restorableNow are the objects of missing a Velero Restore can bring back
// now: those of a kind the Backup holds at a version its CRD no longer
// serves are left out (decide.Unserved), and their rows say why.
func restorableNow(ctx context.Context, c client.Client, d *velero.Destroyed, missing []decide.Held, rows []Row) ([]decide.Held, error) {
	if len(d.Versions) == 0 || len(missing) == 0 {
		return missing, nil // a record made before the versions were kept
	}
	served := map[string][]string{}
	for _, h := range missing {
		key := h.Kind + "." + h.Group
		if _, read := served[key]; read || h.Group == "" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		switch err := c.Get(ctx, client.ObjectKey{Name: h.Resource + "." + h.Group}, crd); {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("reading CRD %s.%s: %w", h.Resource, h.Group, err)
		}
		var versions []string
		for _, v := range crd.Spec.Versions {
			if v.Served {
				versions = append(versions, v.Name)
			}
		}
		served[key] = versions
	}
	unserved := decide.Unserved(decide.UnservedInput{Missing: missing, Versions: d.Versions, Served: served})
	if len(unserved) == 0 {
		return missing, nil
	}
	left := slices.DeleteFunc(slices.Clone(missing), func(h decide.Held) bool { return unserved[h.Kind+"."+h.Group] != "" })
	for i := range rows {
		if why := unserved[rows[i].Object.Kind+"."+rows[i].Object.Group]; why != "" && rows[i].State == StateMissing {
			rows[i].Problem = "not restored: " + why
		}
	}
	return left, nil
}

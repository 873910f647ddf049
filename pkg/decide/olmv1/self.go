package olmv1

import (
	"fmt"
	"strings"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	"k8s.io/apimachinery/pkg/types"
)

// SelfPackage is csv-cleaner's package in its catalog (catalog/csv-cleaner).
const SelfPackage = "csv-cleaner"

// SelfExtension is the ClusterExtension that installed csv-cleaner.
type SelfExtension struct {
	Name string
	UID  types.UID
}

// FindSelfExtension picks the ClusterExtension that installed csv-cleaner
// into namespace: its spec.namespace and its catalog package are
// csv-cleaner's. None is no error; two are, and name none
// (docs/own-uninstall.md).
func FindSelfExtension(namespace string, exts []ocv1.ClusterExtension) (*SelfExtension, error) {
	if namespace == "" {
		return nil, nil
	}
	var found []SelfExtension
	for i := range exts {
		e := &exts[i]
		src := e.Spec.Source
		if e.Spec.Namespace != namespace || src.SourceType != ocv1.SourceTypeCatalog || src.Catalog == nil || src.Catalog.PackageName != SelfPackage {
			continue
		}
		found = append(found, SelfExtension{Name: e.Name, UID: e.UID})
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return &found[0], nil
	}
	names := make([]string, len(found))
	for i, f := range found {
		names[i] = f.Name
	}
	return nil, fmt.Errorf("ClusterExtensions %s all install package %s into namespace %s: csv-cleaner cannot tell which is its own, so it treats none as its own",
		strings.Join(names, ", "), SelfPackage, namespace)
}

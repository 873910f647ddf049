package rbac

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// OLM's owner labels on cluster-scoped objects a CSV owns. Written by hand:
// the source is operator-lifecycle-manager pkg/lib/ownerutil/util.go
// (OwnerKey, OwnerNamespaceKey, OwnerKind and CSVOwnerSelector); importing
// that module for three constants would pull about 200 modules into go.sum.
const (
	OwnerKey          = "olm.owner"
	OwnerNamespaceKey = "olm.owner.namespace"
	// OwnerKindKey's value for the objects a CSV owns is the CSV's kind,
	// decide.KindCSV.
	OwnerKindKey = "olm.owner.kind"
)

// OwnerLabels are the three labels OLM puts on a cluster-scoped object that the CSV owns.
func OwnerLabels(csv types.NamespacedName) labels.Set {
	return labels.Set{
		OwnerKey:          csv.Name,
		OwnerNamespaceKey: csv.Namespace,
		OwnerKindKey:      decide.KindCSV,
	}
}

// OwnerSelector selects the objects that carry all three owner labels for the CSV.
// olm.owner alone is not enough: a CSV name is not unique across namespaces,
// and RBAC shipped inside a bundle carries it too.
func OwnerSelector(csv types.NamespacedName) labels.Selector {
	sel := labels.NewSelector()
	for k, v := range OwnerLabels(csv) {
		r, err := labels.NewRequirement(k, selection.Equals, []string{v})
		if err != nil {
			// A CSV name or namespace is always a valid label value
			// (DNS subdomain of at most 63 characters for names OLM
			// labels with); an invalid one selects nothing.
			return labels.Nothing()
		}
		sel = sel.Add(*r)
	}
	return sel
}

// IsOwnedBy reports whether an object's labels name the CSV as its owner with all three labels.
func IsOwnedBy(objLabels map[string]string, csv types.NamespacedName) bool {
	return OwnerLabels(csv).AsSelector().Matches(labels.Set(objLabels))
}

package rbac

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

func TestOwnerSelector(t *testing.T) {
	csv := types.NamespacedName{Namespace: "operators", Name: "widget.v1"}
	full := map[string]string{OwnerKey: "widget.v1", OwnerNamespaceKey: "operators", OwnerKindKey: decide.KindCSV}
	tests := []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"all three labels", full, true},
		{"extra labels are fine", merge(full, map[string]string{"olm.managed": "true"}), true},
		{"owner name only (bundle RBAC)", map[string]string{OwnerKey: "widget.v1"}, false},
		{"no kind", map[string]string{OwnerKey: "widget.v1", OwnerNamespaceKey: "operators"}, false},
		{"same name in another namespace", merge(full, map[string]string{OwnerNamespaceKey: "other"}), false},
		{"OperatorGroup role", merge(full, map[string]string{OwnerKindKey: "OperatorGroup"}), false},
		{"another CSV", merge(full, map[string]string{OwnerKey: "widget.v2"}), false},
		{"no labels (CRD aggregate role)", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OwnerSelector(csv).Matches(labels.Set(tt.labels)); got != tt.want {
				t.Errorf("OwnerSelector().Matches(%v) = %v, want %v", tt.labels, got, tt.want)
			}
			if got := IsOwnedBy(tt.labels, csv); got != tt.want {
				t.Errorf("IsOwnedBy(%v) = %v, want %v", tt.labels, got, tt.want)
			}
		})
	}
}

func TestOwnerSelectorInvalidNameSelectsNothing(t *testing.T) {
	csv := types.NamespacedName{Namespace: "operators", Name: "not a label value!"}
	if OwnerSelector(csv).Matches(labels.Set{OwnerKey: "not a label value!", OwnerNamespaceKey: "operators", OwnerKindKey: decide.KindCSV}) {
		t.Fatal("an invalid CSV name must select nothing")
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func TestOwnerOf(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   types.NamespacedName
		ok     bool
	}{
		{"all three labels", OwnerLabels(types.NamespacedName{Namespace: "ops", Name: "op.v1"}), types.NamespacedName{Namespace: "ops", Name: "op.v1"}, true},
		{"owned by an OperatorGroup", map[string]string{OwnerKey: "og", OwnerNamespaceKey: "ops", OwnerKindKey: "OperatorGroup"}, types.NamespacedName{Namespace: "ops", Name: "og"}, false},
		{"no namespace", map[string]string{OwnerKey: "op.v1", OwnerKindKey: decide.KindCSV}, types.NamespacedName{Name: "op.v1"}, false},
		{"no labels", nil, types.NamespacedName{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := OwnerOf(tc.labels)
			if got != tc.want || ok != tc.ok {
				t.Errorf("OwnerOf(%v) = %v, %v; want %v, %v", tc.labels, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestOwnerIndexValue(t *testing.T) {
	owned := OwnedClusterRoleLabels(types.NamespacedName{Namespace: "operators", Name: "widget.v1"})
	for _, tt := range []struct {
		name   string
		labels map[string]string
		want   []string
	}{
		{"three owner labels", owned, []string{"operators/widget.v1"}},
		{"owner kind not a CSV", map[string]string{OwnerKey: "widget.v1", OwnerNamespaceKey: "operators", OwnerKindKey: "Subscription"}, nil},
		{"no namespace", map[string]string{OwnerKey: "widget.v1", OwnerKindKey: decide.KindCSV}, nil},
		{"no labels", nil, nil},
	} {
		obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Labels: tt.labels}}
		if got := OwnerIndexValue(obj); !slices.Equal(got, tt.want) {
			t.Errorf("%s: OwnerIndexValue = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// OwnedClusterRoleLabels are the three owner labels OLM puts on a CSV's cluster RBAC.
func OwnedClusterRoleLabels(csv types.NamespacedName) map[string]string {
	return map[string]string{OwnerKey: csv.Name, OwnerNamespaceKey: csv.Namespace, OwnerKindKey: decide.KindCSV}
}

package rbac

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

func TestOwnerSelector(t *testing.T) {
	csv := types.NamespacedName{Namespace: "operators", Name: "widget.v1"}
	full := map[string]string{OwnerKey: "widget.v1", OwnerNamespaceKey: "operators", OwnerKindKey: OwnerKindCSV}
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
	if OwnerSelector(csv).Matches(labels.Set{OwnerKey: "not a label value!", OwnerNamespaceKey: "operators", OwnerKindKey: OwnerKindCSV}) {
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

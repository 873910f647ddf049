package rbac

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

func TestGrantsHold(t *testing.T) {
	tests := []struct {
		name string
		rule rbacv1.PolicyRule
		want bool
	}{
		{"patch on clusterroles", rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles", "clusterrolebindings"}, Verbs: []string{"list", "patch"}}, true},
		{"wildcards", rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}, true},
		{"only the bindings", rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterrolebindings"}, Verbs: []string{"patch"}}, false},
		{"no patch", rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"list", "watch"}}, false},
		{"leases", rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := grantsHold([]rbacv1.PolicyRule{tt.rule}); got != tt.want {
				t.Errorf("grantsHold = %v, want %v", got, tt.want)
			}
		})
	}
}

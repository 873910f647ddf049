package objects

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAvailable(t *testing.T) {
	cond := func(t appsv1.DeploymentConditionType, s corev1.ConditionStatus) appsv1.DeploymentCondition {
		return appsv1.DeploymentCondition{Type: t, Status: s}
	}
	for _, tc := range []struct {
		name       string
		conditions []appsv1.DeploymentCondition
		want       bool
	}{
		{"Available", []appsv1.DeploymentCondition{cond(appsv1.DeploymentProgressing, corev1.ConditionTrue), cond(appsv1.DeploymentAvailable, corev1.ConditionTrue)}, true},
		{"not Available", []appsv1.DeploymentCondition{cond(appsv1.DeploymentAvailable, corev1.ConditionFalse)}, false},
		{"no condition yet", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Available(&appsv1.Deployment{Status: appsv1.DeploymentStatus{Conditions: tc.conditions}}); got != tc.want {
				t.Errorf("available = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDown(t *testing.T) {
	available := []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}
	now := metav1.Now()
	tests := []struct {
		name string
		dep  appsv1.Deployment
		want string
	}{
		{"running", appsv1.Deployment{Status: appsv1.DeploymentStatus{Conditions: available}}, ""},
		{"not Available", appsv1.Deployment{}, "is not Available"},
		{"being deleted, though Available", appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now},
			Status: appsv1.DeploymentStatus{Conditions: available}}, "is being deleted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Down(&tt.dep); got != tt.want {
				t.Errorf("Down = %q, want %q", got, tt.want)
			}
		})
	}
}

package decide

import (
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestDecideSelf(t *testing.T) {
	self := types.NamespacedName{Namespace: "csv-cleaner", Name: "csv-cleaner.v0.1.0"}
	now := metav1.Now()
	installed := &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: self.Namespace, Name: self.Name, UID: "old"}}
	deleting := installed.DeepCopy()
	deleting.DeletionTimestamp = &now
	replacing := deleting.DeepCopy()
	replacing.Status.Phase, replacing.Status.Reason = operatorsv1alpha1.CSVPhaseDeleting, operatorsv1alpha1.CSVReasonReplaced
	next := operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: self.Namespace, Name: "csv-cleaner.v0.2.0", UID: "new"}}
	next.Spec.Replaces = self.Name
	unrelated := operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: self.Namespace, Name: "other.v1", UID: "other"}}
	tracking := operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: self.Namespace, Name: "csv-cleaner"},
		Status: operatorsv1alpha1.SubscriptionStatus{InstalledCSV: self.Name}}

	for _, tc := range []struct {
		name string
		in   SelfInput
		want SelfFate
		why  string
	}{
		{"installed", SelfInput{Self: self, CSV: installed}, SelfInstalled, "is installed"},
		{"not installed by OLM", SelfInput{Self: types.NamespacedName{Namespace: "csv-cleaner"}}, SelfInstalled, "OPERATOR_CONDITION_NAME"},
		{"not installed by OLM, namespace terminating", SelfInput{Self: types.NamespacedName{Namespace: "csv-cleaner"}, NamespaceTerminating: true}, SelfUninstalled, "namespace csv-cleaner is terminating"},
		{"namespace terminating while installed", SelfInput{Self: self, CSV: installed, NamespaceTerminating: true}, SelfUninstalled, "terminating"},
		{"namespace terminating during an upgrade", SelfInput{Self: self, CSV: replacing, Siblings: []operatorsv1alpha1.ClusterServiceVersion{next}, NamespaceTerminating: true}, SelfUninstalled, "terminating"},
		{"deleted, nothing replaces it", SelfInput{Self: self, CSV: deleting, Siblings: []operatorsv1alpha1.ClusterServiceVersion{*installed, unrelated}}, SelfUninstalled, "no CSV replaces it"},
		{"gone, nothing replaces it", SelfInput{Self: self}, SelfUninstalled, "no CSV replaces it"},
		{"deleted by OLM's upgrade (phase)", SelfInput{Self: self, CSV: replacing}, SelfReplaced, "Upgrade"},
		{"deleted while another CSV replaces it", SelfInput{Self: self, CSV: deleting, Siblings: []operatorsv1alpha1.ClusterServiceVersion{next}}, SelfReplaced, "csv-cleaner.v0.2.0 replaces it"},
		{"gone, another CSV replaces it", SelfInput{Self: self, Siblings: []operatorsv1alpha1.ClusterServiceVersion{next}}, SelfReplaced, "Upgrade"},
		{"deleted while its Subscription tracks it", SelfInput{Self: self, CSV: deleting, Subscriptions: []operatorsv1alpha1.Subscription{tracking}}, SelfReplaced, "Reinstall"},
		{"gone while its Subscription tracks it", SelfInput{Self: self, Subscriptions: []operatorsv1alpha1.Subscription{tracking}}, SelfReplaced, "Reinstall"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := DecideSelf(tc.in)
			if got != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("DecideSelf = %s (%q), want %s (containing %q)", got, why, tc.want, tc.why)
			}
		})
	}
}

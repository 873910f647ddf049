package decide

import (
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

func testCSV(name string, mut ...func(*operatorsv1alpha1.ClusterServiceVersion)) *operatorsv1alpha1.ClusterServiceVersion {
	c := &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "operators", UID: types.UID("uid-" + name)}}
	for _, m := range mut {
		m(c)
	}
	return c
}

func TestClassify(t *testing.T) {
	sub := func(installed, current string) operatorsv1alpha1.Subscription {
		s := operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Name: "widget", Namespace: "operators"}}
		s.Status = operatorsv1alpha1.SubscriptionStatus{InstalledCSV: installed, CurrentCSV: current}
		return s
	}
	deletingSub := sub("widget.v1", "")
	deletingSub.DeletionTimestamp = &metav1.Time{}

	tests := []struct {
		name       string
		in         ClassifyInput
		wantSkip   string
		wantOptOut bool
	}{
		{"plain uninstall", ClassifyInput{CSV: testCSV("widget.v1")}, "", false},
		{"copied by label", ClassifyInput{CSV: testCSV("widget.v1", func(c *operatorsv1alpha1.ClusterServiceVersion) {
			c.Labels = map[string]string{operatorsv1alpha1.CopiedLabelKey: "operators"}
		})}, cleanupv1alpha1.ReasonCopied, false},
		{"copied by status reason", ClassifyInput{CSV: testCSV("widget.v1", func(c *operatorsv1alpha1.ClusterServiceVersion) {
			c.Status.Reason = operatorsv1alpha1.CSVReasonCopied
		})}, cleanupv1alpha1.ReasonCopied, false},
		{"copied by operator namespace annotation", ClassifyInput{CSV: testCSV("widget.v1", func(c *operatorsv1alpha1.ClusterServiceVersion) {
			c.Annotations = map[string]string{"olm.operatorNamespace": "elsewhere"}
		})}, cleanupv1alpha1.ReasonCopied, false},
		{"phase Replacing", ClassifyInput{CSV: testCSV("widget.v1", func(c *operatorsv1alpha1.ClusterServiceVersion) {
			c.Status.Phase, c.Status.Reason = operatorsv1alpha1.CSVPhaseReplacing, operatorsv1alpha1.CSVReasonBeingReplaced
		})}, cleanupv1alpha1.ReasonUpgrade, false},
		{"phase Deleting reason Replaced", ClassifyInput{CSV: testCSV("widget.v1", func(c *operatorsv1alpha1.ClusterServiceVersion) {
			c.Status.Phase, c.Status.Reason = operatorsv1alpha1.CSVPhaseDeleting, operatorsv1alpha1.CSVReasonReplaced
		})}, cleanupv1alpha1.ReasonUpgrade, false},
		{"phase Failed is no upgrade", ClassifyInput{CSV: testCSV("widget.v1", func(c *operatorsv1alpha1.ClusterServiceVersion) {
			c.Status.Phase, c.Status.Reason = operatorsv1alpha1.CSVPhaseFailed, operatorsv1alpha1.CSVReasonComponentFailed
		})}, "", false},
		{"sibling replaces it", ClassifyInput{CSV: testCSV("widget.v1"), Siblings: []operatorsv1alpha1.ClusterServiceVersion{
			*testCSV("widget.v2", func(c *operatorsv1alpha1.ClusterServiceVersion) { c.Spec.Replaces = "widget.v1" })}}, cleanupv1alpha1.ReasonUpgrade, false},
		{"a copied sibling does not count", ClassifyInput{CSV: testCSV("widget.v1"), Siblings: []operatorsv1alpha1.ClusterServiceVersion{
			*testCSV("widget.v2", func(c *operatorsv1alpha1.ClusterServiceVersion) {
				c.Spec.Replaces = "widget.v1"
				c.Labels = map[string]string{operatorsv1alpha1.CopiedLabelKey: "x"}
			})}}, "", false},
		{"sibling replaces another", ClassifyInput{CSV: testCSV("widget.v1"), Siblings: []operatorsv1alpha1.ClusterServiceVersion{
			*testCSV("widget.v3", func(c *operatorsv1alpha1.ClusterServiceVersion) { c.Spec.Replaces = "widget.v2" })}}, "", false},
		{"subscription installedCSV", ClassifyInput{CSV: testCSV("widget.v1"), Subscriptions: []operatorsv1alpha1.Subscription{sub("widget.v1", "")}}, cleanupv1alpha1.ReasonReinstall, false},
		{"subscription currentCSV", ClassifyInput{CSV: testCSV("widget.v1"), Subscriptions: []operatorsv1alpha1.Subscription{sub("", "widget.v1")}}, cleanupv1alpha1.ReasonReinstall, false},
		{"subscription of another CSV", ClassifyInput{CSV: testCSV("widget.v1"), Subscriptions: []operatorsv1alpha1.Subscription{sub("other.v1", "other.v1")}}, "", false},
		{"subscription being deleted", ClassifyInput{CSV: testCSV("widget.v1"), Subscriptions: []operatorsv1alpha1.Subscription{deletingSub}}, "", false},
		{"namespace terminating: no reinstall possible", ClassifyInput{CSV: testCSV("widget.v1"), NamespaceTerminating: true,
			Subscriptions: []operatorsv1alpha1.Subscription{sub("widget.v1", "")}}, "", false},
		{"opt-out annotation", ClassifyInput{CSV: testCSV("widget.v1", func(c *operatorsv1alpha1.ClusterServiceVersion) {
			c.Annotations = map[string]string{OptOutAnnotation: "true"}
		})}, "", true},
		{"opt-out annotation not true", ClassifyInput{CSV: testCSV("widget.v1", func(c *operatorsv1alpha1.ClusterServiceVersion) {
			c.Annotations = map[string]string{OptOutAnnotation: "false"}
		})}, "", false},
		{"copy wins over opt-out", ClassifyInput{CSV: testCSV("widget.v1", func(c *operatorsv1alpha1.ClusterServiceVersion) {
			c.Annotations = map[string]string{OptOutAnnotation: "true"}
			c.Labels = map[string]string{operatorsv1alpha1.CopiedLabelKey: "operators"}
		})}, cleanupv1alpha1.ReasonCopied, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Classify(tt.in)
			if v.SkipReason != tt.wantSkip || v.OptedOut != tt.wantOptOut {
				t.Errorf("Classify = %+v, want skip %q, optedOut %v", v, tt.wantSkip, tt.wantOptOut)
			}
			if v.Message == "" {
				t.Error("a verdict must explain itself")
			}
		})
	}
}

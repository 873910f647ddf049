package olmv1

import (
	"fmt"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// SelectExtensionPolicy returns the policy that manages a ClusterExtension
// with the given labels: of the policies whose clusterExtensionSelector
// matches (absent selects no extension, empty selects every one), the
// highest priority wins, then the name that sorts first, as for CSVs.
// Policies being deleted select nothing; a selector that cannot be parsed
// selects nothing and is reported in errs.
func SelectExtensionPolicy(policies []cleanupv1alpha1.CleanupPolicy, extLabels map[string]string) (decide.Selection, []error) {
	return decide.SelectAmong(policies, func(p *cleanupv1alpha1.CleanupPolicy) (bool, error) { return SelectsExtension(p, extLabels) })
}

// SelectsExtension reports whether a policy's clusterExtensionSelector
// matches an extension's labels. A policy without one selects no extension.
func SelectsExtension(p *cleanupv1alpha1.CleanupPolicy, extLabels map[string]string) (bool, error) {
	if p.Spec.ClusterExtensionSelector == nil {
		return false, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(p.Spec.ClusterExtensionSelector)
	if err != nil {
		return false, fmt.Errorf("CleanupPolicy %s has an invalid clusterExtensionSelector: %w", p.Name, err)
	}
	return selector.Matches(labels.Set(extLabels)), nil
}

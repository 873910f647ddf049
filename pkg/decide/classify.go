package decide

import (
	"fmt"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// ClassifyInput is what Classify looks at, all read live from the API server.
type ClassifyInput struct {
	// CSV is the CSV being deleted.
	CSV *operatorsv1alpha1.ClusterServiceVersion
	// Siblings are the other CSVs in its namespace.
	Siblings []operatorsv1alpha1.ClusterServiceVersion
	// Subscriptions are the Subscriptions in its namespace.
	Subscriptions []operatorsv1alpha1.Subscription
	// NamespaceTerminating: nothing can be re-created in the namespace, so a
	// Subscription there can no longer reinstall the CSV.
	NamespaceTerminating bool
}

// Verdict says what a CSV's deletion is.
type Verdict struct {
	// SkipReason is set when the deletion is not an uninstall: Copied,
	// Upgrade or Reinstall. Nothing is deleted and the finalizer goes at once.
	SkipReason string
	// Message explains the verdict for a person.
	Message string
	// OptedOut: the CSV carries the console's opt-out annotation; operands are kept.
	OptedOut bool
}

// Classify decides what a CSV's deletion is. The order matters: a copy is
// never an uninstall whatever else it says, an upgrade never waits on the
// cleaner, and a Subscription that still tracks the CSV will re-create it.
func Classify(in ClassifyInput) Verdict {
	csv := in.CSV
	if csv.IsCopied() {
		return Verdict{SkipReason: cleanupv1alpha1.ReasonCopied,
			Message: fmt.Sprintf("CSV is a copy made by OLM for a target namespace (operator namespace %q)", csv.Annotations["olm.operatorNamespace"])}
	}
	if replacing(csv) {
		return Verdict{SkipReason: cleanupv1alpha1.ReasonUpgrade,
			Message: fmt.Sprintf("CSV is being replaced by an upgrade (phase %s, reason %s)", csv.Status.Phase, csv.Status.Reason)}
	}
	for i := range in.Siblings {
		s := &in.Siblings[i]
		if s.UID == csv.UID || s.IsCopied() {
			continue
		}
		if s.Spec.Replaces == csv.Name {
			return Verdict{SkipReason: cleanupv1alpha1.ReasonUpgrade,
				Message: fmt.Sprintf("CSV %s replaces it (spec.replaces)", s.Name)}
		}
	}
	if !in.NamespaceTerminating {
		for i := range in.Subscriptions {
			sub := &in.Subscriptions[i]
			if sub.DeletionTimestamp != nil || sub.Status.InstalledCSV != csv.Name && sub.Status.CurrentCSV != csv.Name {
				continue
			}
			return Verdict{SkipReason: cleanupv1alpha1.ReasonReinstall,
				Message: fmt.Sprintf("Subscription %s still tracks the CSV, so OLM will re-create it; delete the Subscription first to uninstall", sub.Name)}
		}
	}
	if csv.Annotations[OptOutAnnotation] == "true" {
		return Verdict{OptedOut: true, Message: fmt.Sprintf("CSV carries %s=true: operands are kept", OptOutAnnotation)}
	}
	return Verdict{Message: "CSV is being uninstalled"}
}

// replacing reports whether OLM has marked the CSV as replaced by an upgrade.
func replacing(csv *operatorsv1alpha1.ClusterServiceVersion) bool {
	switch csv.Status.Phase {
	case operatorsv1alpha1.CSVPhaseReplacing, operatorsv1alpha1.CSVPhaseDeleting:
		switch csv.Status.Reason {
		case operatorsv1alpha1.CSVReasonBeingReplaced, operatorsv1alpha1.CSVReasonReplaced:
			return true
		}
	}
	return csv.IsObsolete()
}

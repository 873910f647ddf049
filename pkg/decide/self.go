package decide

import (
	"fmt"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// SelfFate is what is happening to csv-cleaner's own install.
type SelfFate int

const (
	// SelfInstalled: csv-cleaner runs as installed (or was not installed by
	// OLM); a stop is a restart, a rollout or a scale-down.
	SelfInstalled SelfFate = iota
	// SelfReplaced: its own CSV is deleted because another version replaces
	// it (an upgrade) or OLM re-creates it (a reinstall). The next version
	// takes over every finalizer: csv-cleaner releases only its own CSV and
	// the hold on its own version's RBAC, and acts on nothing else.
	SelfReplaced
	// SelfUninstalled: its namespace is terminating, or its own CSV is
	// deleted (or gone) with no CSV replacing it: csv-cleaner removes every
	// finalizer it placed, its own CSV's last.
	SelfUninstalled
)

func (f SelfFate) String() string {
	switch f {
	case SelfReplaced:
		return "Replaced"
	case SelfUninstalled:
		return "Uninstalled"
	}
	return "Installed"
}

// SelfInput is what DecideSelf looks at, read from the API server.
type SelfInput struct {
	// Self is csv-cleaner's own CSV (empty name when OLM did not install it).
	Self types.NamespacedName
	// NamespaceTerminating: csv-cleaner's own namespace is being deleted.
	NamespaceTerminating bool
	// CSV is its own CSV as read; nil when it is gone.
	CSV *operatorsv1alpha1.ClusterServiceVersion
	// Siblings and Subscriptions are the CSVs and Subscriptions in its namespace.
	Siblings      []operatorsv1alpha1.ClusterServiceVersion
	Subscriptions []operatorsv1alpha1.Subscription
}

// DecideSelf decides what is happening to csv-cleaner's own install, and
// why. A terminating namespace takes everything with it, whatever else is
// under way; otherwise the deletion of its own CSV gets the rules every
// managed CSV gets (Classify): an upgrade or a reinstall is never its
// uninstall.
func DecideSelf(in SelfInput) (SelfFate, string) {
	if in.NamespaceTerminating {
		return SelfUninstalled, fmt.Sprintf("its namespace %s is terminating", in.Self.Namespace)
	}
	if in.Self.Name == "" {
		return SelfInstalled, "OLM did not install it (no OPERATOR_CONDITION_NAME)"
	}
	if in.CSV != nil && in.CSV.DeletionTimestamp.IsZero() {
		return SelfInstalled, fmt.Sprintf("its CSV %s is installed", in.Self)
	}
	csv := in.CSV
	if csv == nil {
		// Gone: only what the other objects say can tell an upgrade or a reinstall.
		csv = &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: in.Self.Namespace, Name: in.Self.Name}}
	}
	v := Classify(ClassifyInput{CSV: csv, Siblings: in.Siblings, Subscriptions: in.Subscriptions})
	switch v.SkipReason {
	case cleanupv1alpha1.ReasonUpgrade, cleanupv1alpha1.ReasonReinstall:
		return SelfReplaced, fmt.Sprintf("its CSV %s is deleted for a %s: %s", in.Self, v.SkipReason, v.Message)
	}
	return SelfUninstalled, fmt.Sprintf("its CSV %s is deleted and no CSV replaces it", in.Self)
}

package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// Subscription is an install through OLM: an OperatorGroup and a
// Subscription to a package of a catalog, in the operator's namespace.
type Subscription struct {
	Namespace string
	Package   fixtures.Package
	// Catalog is the CatalogSource's name (in OLM's namespace).
	Catalog string
	// Targets of the OperatorGroup; [""] means all namespaces.
	Targets []string
	// StartingCSV is the version to install first ("" installs the head).
	StartingCSV string
	// Manual makes every InstallPlan wait for ApproveInstallPlan.
	Manual bool
}

// OperatorGroup is the install's OperatorGroup.
func (s Subscription) OperatorGroup() *operatorsv1.OperatorGroup {
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Name: s.Namespace, Namespace: s.Namespace}}
	if len(s.Targets) != 1 || s.Targets[0] != "" {
		og.Spec.TargetNamespaces = s.Targets
	}
	return og
}

// Key is the Subscription's namespace/name.
func (s Subscription) Key() types.NamespacedName {
	return types.NamespacedName{Namespace: s.Namespace, Name: s.Package.Name}
}

// CSVKey is the key of one of the package's CSVs in the operator's namespace.
func (s Subscription) CSVKey(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: s.Namespace, Name: name}
}

// Subscribe creates the OperatorGroup and the Subscription; the namespaces must exist.
func (c *Cluster) Subscribe(ctx context.Context, s Subscription) error {
	if err := c.Client.Create(ctx, s.OperatorGroup()); err != nil {
		return fmt.Errorf("creating the OperatorGroup of %s: %w", s.Namespace, err)
	}
	return c.Resubscribe(ctx, s)
}

// Resubscribe creates the Subscription again, in a namespace whose
// OperatorGroup stayed: a reinstall after an uninstall.
func (c *Cluster) Resubscribe(ctx context.Context, s Subscription) error {
	sub := &operatorsv1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Name: s.Package.Name, Namespace: s.Namespace},
		Spec: &operatorsv1alpha1.SubscriptionSpec{
			CatalogSource: s.Catalog, CatalogSourceNamespace: c.OLMNamespace,
			Package: s.Package.Name, Channel: fixtures.Channel, StartingCSV: s.StartingCSV,
			InstallPlanApproval: operatorsv1alpha1.ApprovalAutomatic,
		},
	}
	if s.Manual {
		sub.Spec.InstallPlanApproval = operatorsv1alpha1.ApprovalManual
	}
	if err := c.Client.Create(ctx, sub); err != nil {
		return fmt.Errorf("creating Subscription %s: %w", s.Key(), err)
	}
	return nil
}

// ApproveInstallPlan approves the InstallPlan that installs csvName, as a
// user does: the one the Subscription in ns names in its status, once OLM
// has made it and it waits for approval.
func (c *Cluster) ApproveInstallPlan(ctx context.Context, s Subscription, csvName string) error {
	return controlplane.WaitFor(ctx, time.Minute, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		sub := &operatorsv1alpha1.Subscription{}
		if err := c.Client.Get(ctx, s.Key(), sub); err != nil {
			return false, err
		}
		if sub.Status.InstallPlanRef == nil {
			return false, nil
		}
		ip := &operatorsv1alpha1.InstallPlan{}
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: sub.Status.InstallPlanRef.Name}, ip); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if !slices.Contains(ip.Spec.ClusterServiceVersionNames, csvName) || ip.Status.Phase != operatorsv1alpha1.InstallPlanPhaseRequiresApproval {
			return false, nil
		}
		base := ip.DeepCopy()
		ip.Spec.Approved = true
		err := c.Client.Patch(ctx, ip, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsConflict(err) {
			return false, nil // OLM wrote it meanwhile: read it again
		}
		return err == nil, err
	})
}

// WaitForInstallPlanComplete waits until the InstallPlan in ns that
// installs csvName is Complete and, on the local cluster, until OLM's
// catalog operator has itself seen it Complete (its log says so). Until
// then the catalog operator may still apply the plan's steps from its
// informer cache, which lags under load: even after the CSV reached
// Succeeded, and after an uninstall began, it re-created RBAC that OLM had
// just deleted.
func (c *Cluster) WaitForInstallPlanComplete(ctx context.Context, ns, csvName string) error {
	var name string
	err := controlplane.WaitFor(ctx, 2*time.Minute, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		plans := &operatorsv1alpha1.InstallPlanList{}
		if err := c.Client.List(ctx, plans, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, ip := range plans.Items {
			if slices.Contains(ip.Spec.ClusterServiceVersionNames, csvName) && ip.Status.Phase == operatorsv1alpha1.InstallPlanPhaseComplete {
				name = ip.Name
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil || !c.Local() {
		return err
	}
	seen := fmt.Sprintf("ip=%s namespace=%s phase=%s", name, ns, operatorsv1alpha1.InstallPlanPhaseComplete)
	err = controlplane.WaitFor(ctx, 2*time.Minute, 100*time.Millisecond, func(context.Context) (bool, error) {
		log, err := os.ReadFile(filepath.Join(c.LogDir, "catalog.log"))
		return err == nil && strings.Contains(string(log), seen), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for OLM's catalog operator to see InstallPlan %s/%s Complete: %w", ns, name, err)
	}
	return nil
}

// WaitForSubscriptionInstalled waits until the Subscription says, as
// `kubectl get subscription` shows, that csvName is installed and nothing
// newer is known (state AtLatestKnown): OLM's catalog operator has then
// caught up with the install.
func (c *Cluster) WaitForSubscriptionInstalled(ctx context.Context, s Subscription, csvName string) error {
	sub := &operatorsv1alpha1.Subscription{}
	err := controlplane.WaitFor(ctx, 2*time.Minute, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, s.Key(), sub); err != nil {
			return false, err
		}
		return sub.Status.InstalledCSV == csvName && sub.Status.State == operatorsv1alpha1.SubscriptionStateAtLatest, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for Subscription %s to report %s installed (state %q, installed %q): %w",
			s.Key(), csvName, sub.Status.State, sub.Status.InstalledCSV, err)
	}
	return nil
}

// WaitForCSVPhase waits until the CSV reaches phase and returns it.
func (c *Cluster) WaitForCSVPhase(ctx context.Context, key types.NamespacedName, phase operatorsv1alpha1.ClusterServiceVersionPhase) (*operatorsv1alpha1.ClusterServiceVersion, error) {
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	err := controlplane.WaitFor(ctx, 2*time.Minute, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, key, csv); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return csv.Status.Phase == phase, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for CSV %s to reach phase %s (now %q, %s: %s): %w",
			key, phase, csv.Status.Phase, csv.Status.Reason, csv.Status.Message, err)
	}
	return csv, nil
}

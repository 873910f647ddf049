package velero

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// storageLocationAvailable is an Available BackupStorageLocation's status.phase.
const storageLocationAvailable = "Available"

// LocationProblem checks that the BackupStorageLocation called name (the
// default location when name is empty) is Available, before a Backup is
// made there: a problem when it is not, or does not exist.
func (c Client) LocationProblem(ctx context.Context, name string) (*decide.Problem, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(storageLocationKind.GroupVersion().WithKind(storageLocationKind.Kind + "List"))
	if err := c.Live.List(ctx, list, client.InNamespace(c.Namespace)); err != nil {
		return nil, absent(fmt.Errorf("listing Velero's BackupStorageLocations in %s: %w", c.Namespace, err))
	}
	var found *unstructured.Unstructured
	for i := range list.Items {
		l := &list.Items[i]
		isDefault, _, _ := unstructured.NestedBool(l.Object, "spec", "default")
		if l.GetName() == name || name == "" && isDefault {
			found = l
			break
		}
	}
	what := "default BackupStorageLocation"
	if name != "" {
		what = "BackupStorageLocation " + name
	}
	if found == nil {
		return Unavailable("Velero", "Velero has no %s in namespace %s: nothing is deleted without a backup; create it, or name another in the policy's backup.velero.storageLocation", what, c.Namespace), nil
	}
	phase, _, _ := unstructured.NestedString(found.Object, "status", "phase")
	if phase != storageLocationAvailable {
		msg, _, _ := unstructured.NestedString(found.Object, "status", "message")
		return Unavailable("BackupStorageLocation "+found.GetName(), "Velero's %s (%s) is %q, not Available: %s; nothing is deleted without a backup", what, found.GetName(), phase, msg), nil
	}
	return nil, nil
}

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

// Location is a BackupStorageLocation as Velero last validated it.
type Location struct {
	// Name is its name; Found, whether it exists.
	Name  string
	Found bool
	// Phase and Message are its status (Available, Unavailable, "" before
	// Velero validated it).
	Phase, Message string
}

// Available reports whether Velero can read and write the location.
func (l *Location) Available() bool { return l.Found && l.Phase == storageLocationAvailable }

// What names the location for a person: "BackupStorageLocation NS/NAME",
// or Velero's default one when it names none.
func (l *Location) What(namespace string) string {
	if l.Name == "" {
		return "default BackupStorageLocation in namespace " + namespace
	}
	return "BackupStorageLocation " + namespace + "/" + l.Name
}

// Location reads the BackupStorageLocation called name (the default
// location when name is empty) as Velero last validated it.
func (c Client) Location(ctx context.Context, name string) (*Location, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(storageLocationKind.GroupVersion().WithKind(storageLocationKind.Kind + "List"))
	if err := c.Live.List(ctx, list, client.InNamespace(c.Namespace)); err != nil {
		return nil, absent(fmt.Errorf("listing Velero's BackupStorageLocations in %s: %w", c.Namespace, err))
	}
	for i := range list.Items {
		l := &list.Items[i]
		isDefault, _, _ := unstructured.NestedBool(l.Object, "spec", "default")
		if l.GetName() == name || name == "" && isDefault {
			loc := &Location{Name: l.GetName(), Found: true}
			loc.Phase, _, _ = unstructured.NestedString(l.Object, "status", "phase")
			loc.Message, _, _ = unstructured.NestedString(l.Object, "status", "message")
			return loc, nil
		}
	}
	return &Location{Name: name}, nil
}

// LocationProblem checks that the BackupStorageLocation called name (the
// default location when name is empty) is Available, before a Backup is
// made there: a problem when it is not, or does not exist.
func (c Client) LocationProblem(ctx context.Context, name string) (*decide.Problem, error) {
	loc, err := c.Location(ctx, name)
	if err != nil {
		return nil, err
	}
	what := "default BackupStorageLocation"
	if name != "" {
		what = "BackupStorageLocation " + name
	}
	switch {
	case !loc.Found:
		return Unavailable("Velero", "Velero has no %s in namespace %s: nothing is deleted without a backup; create it, or name another in the policy's backup.velero.storageLocation", what, c.Namespace), nil
	case !loc.Available():
		return Unavailable("BackupStorageLocation "+loc.Name, "Velero's %s (%s) is %q, not Available: %s; nothing is deleted without a backup", what, loc.Name, loc.Phase, loc.Message), nil
	}
	return nil, nil
}

package decide

import "k8s.io/apimachinery/pkg/types"

// The kinds of owner an uninstall is of.
const (
	KindCSV       = "ClusterServiceVersion"
	KindExtension = "ClusterExtension"
)

// Owner is what an uninstall is of, and what an undo brings back: a CSV
// (Kind KindCSV, its namespace and name) or a ClusterExtension (Kind
// KindExtension, its name). UID is the one object's, "" where only the
// name is known (an undo asked for by name).
type Owner struct {
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid,omitempty"`
}

// Extension reports whether the owner is a ClusterExtension.
func (o Owner) Extension() bool { return o.Kind == KindExtension }

// String names the owner for a person: "CSV ns/name", "ClusterExtension name".
func (o Owner) String() string {
	if o.Extension() {
		return "ClusterExtension " + o.Name
	}
	return "CSV " + o.Namespace + "/" + o.Name
}

// Hash is OwnerHash of the owner: the label its Backups carry.
func (o Owner) Hash() string { return OwnerHash(o.Kind, o.Namespace, o.Name) }

// BackupName is BackupName of the owner at attempt.
func (o Owner) BackupName(attempt int32) string {
	return BackupName(o.Kind, o.Namespace, o.Name, o.UID, attempt)
}

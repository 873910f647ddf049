package destroyed

import (
	"encoding/json"
	"fmt"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// ownerKeys are the keys a record names its owner by, since version 1:
// Owner for a person ("CSV ns/name", "ClusterExtension name"), the others
// for a program. A record written by any csv-cleaner keeps them, so that
// an older one reads a newer record's owner.
type ownerKeys struct {
	Owner          string `json:"owner"`
	OwnerKind      string `json:"ownerKind"`
	OwnerNamespace string `json:"ownerNamespace,omitempty"`
	OwnerName      string `json:"ownerName"`
}

// record is a Record without its JSON methods.
type record Record

// MarshalJSON writes the record with its owner under ownerKeys.
func (r Record) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(struct {
		ownerKeys
		record
	}{ownerKeys{Owner: r.Owner.String(), OwnerKind: r.Owner.Kind, OwnerNamespace: r.Owner.Namespace, OwnerName: r.Owner.Name}, record(r)})
	if err != nil {
		return nil, fmt.Errorf("writing the record of what the uninstall of %s destroys: %w", r.Owner, err)
	}
	return b, nil
}

// UnmarshalJSON reads a record, its owner from ownerKeys (the "owner" said
// for a person is not read back: Owner.String says it again).
func (r *Record) UnmarshalJSON(b []byte) error {
	in := struct {
		ownerKeys
		*record
	}{record: (*record)(r)}
	if err := json.Unmarshal(b, &in); err != nil {
		return fmt.Errorf("reading the record of what an uninstall destroyed: %w", err)
	}
	r.Owner = decide.Owner{Kind: in.OwnerKind, Namespace: in.OwnerNamespace, Name: in.OwnerName}
	return nil
}

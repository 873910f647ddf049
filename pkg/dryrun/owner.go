package dryrun

import (
	"encoding/json"
	"fmt"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// ownerKeys are the keys a plan's JSON names its owner by: CSV for a CSV,
// ClusterExtension for a ClusterExtension (the keys every csv-cleaner
// plan has printed, which scripts read).
type ownerKeys struct {
	CSV              *csvKey `json:"csv,omitempty"`
	ClusterExtension string  `json:"clusterExtension,omitempty"`
}

// csvKey names a CSV in the plan's JSON.
type csvKey struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// keysOf are the keys that name owner.
func keysOf(owner decide.Owner) ownerKeys {
	switch owner.Kind {
	case decide.KindCSV:
		return ownerKeys{CSV: &csvKey{Namespace: owner.Namespace, Name: owner.Name}}
	case decide.KindExtension:
		return ownerKeys{ClusterExtension: owner.Name}
	}
	return ownerKeys{}
}

// owner is the owner the keys name.
func (k ownerKeys) owner() decide.Owner {
	switch {
	case k.CSV != nil:
		return decide.Owner{Kind: decide.KindCSV, Namespace: k.CSV.Namespace, Name: k.CSV.Name}
	case k.ClusterExtension != "":
		return decide.Owner{Kind: decide.KindExtension, Name: k.ClusterExtension}
	}
	return decide.Owner{}
}

// plan is a DryRun without its JSON methods.
type plan DryRun

// MarshalJSON writes the plan with its owner under ownerKeys.
func (d DryRun) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(struct {
		ownerKeys
		plan
	}{keysOf(d.Owner), plan(d)})
	if err != nil {
		return nil, fmt.Errorf("writing the plan of %s: %w", d.Owner, err)
	}
	return b, nil
}

// UnmarshalJSON reads a plan, its owner from ownerKeys.
func (d *DryRun) UnmarshalJSON(b []byte) error {
	in := struct {
		ownerKeys
		*plan
	}{plan: (*plan)(d)}
	if err := json.Unmarshal(b, &in); err != nil {
		return fmt.Errorf("reading a plan: %w", err)
	}
	d.Owner = in.owner()
	return nil
}

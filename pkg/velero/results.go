package velero

import (
	"context"
	"errors"
	"time"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// result is one list of Velero's results (pkg/util/results.Result).
type result struct {
	Velero     []string            `json:"velero"`
	Cluster    []string            `json:"cluster"`
	Namespaces map[string][]string `json:"namespaces"`
}

// Failure reads what Velero says of a Backup that failed: its status, and
// the errors of its results (BackupResults, gzipped JSON, read as `velero
// backup describe --details` does) for one that ran. ready is false while
// Velero has not given the results' URL; a Backup refused by validation
// has none.
func (c Client) Failure(ctx context.Context, b *Backup, now time.Time) (decide.BackupFailure, bool, error) {
	f := decide.BackupFailure{Name: b.Name, Phase: b.Phase, Errors: b.Errors, FailureReason: b.FailureReason, ValidationErrors: b.ValidationErrors}
	if b.Phase == decide.BackupPhaseFailedValidation {
		return f, true, nil
	}
	var results struct {
		Errors result `json:"errors"`
	}
	ready, err := c.fetch(ctx, b, targetResults, now, &results)
	if errors.Is(err, errNotStored) {
		return f, true, nil
	}
	if !ready || err != nil {
		return f, ready, err
	}
	f.Results = append(append(f.Results, results.Errors.Velero...), results.Errors.Cluster...)
	for _, ns := range sortedKeys(results.Errors.Namespaces) {
		f.Results = append(f.Results, results.Errors.Namespaces[ns]...)
	}
	return f, true, nil
}

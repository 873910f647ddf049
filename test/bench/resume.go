package bench

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// Resume is how fast a csv-cleaner started after a CSV was deleted takes the uninstall up.
type Resume struct {
	Operands int
	// FirstDelete: from the process's start to the first operand deleted.
	FirstDelete time.Duration
	// Complete: from the process's start to the CSV being gone.
	Complete time.Duration
}

// MeasureResume installs an operator with n operands, lets csv-cleaner put
// its finalizer on the CSV, stops csv-cleaner, deletes the CSV, and starts
// csv-cleaner again.
func (e *Env) MeasureResume(ctx context.Context, n int) (Resume, error) {
	res := Resume{Operands: n}
	id := "resume"
	ns, err := e.namespaces(ctx, "bench-target", targetNamespaces)
	if err != nil {
		return res, err
	}
	in := fixtures.Install{Namespace: id, CSVName: id + ".v1.0.0", Targets: ns, CRDs: crds(id), Labels: map[string]string{"bench": id}, OLMAdminRoles: true}
	if err := e.policy(ctx, id); err != nil {
		return res, err
	}
	if _, err := in.Create(ctx, e.Client); err != nil {
		return res, err
	}
	if err := e.waitOperandRights(ctx, in.CRDs); err != nil {
		return res, err
	}
	if err := e.operands(ctx, in.CRDs, ns, n); err != nil {
		return res, err
	}
	first, err := e.StartCleaner(ctx, "csv-cleaner-resume-1")
	if err != nil {
		return res, err
	}
	if err := e.waitFinalizer(ctx, in.Key()); err != nil {
		return res, err
	}
	if err := first.Stop(30 * time.Second); err != nil {
		return res, err
	}
	// Operands created in the deletion's second would be kept (CreatedAfterDeletion).
	fixtures.WaitNextSecond(time.Now())
	if err := e.Client.Delete(ctx, in.CSV()); err != nil {
		return res, fmt.Errorf("deleting CSV %s: %w", in.Key(), err)
	}

	deleted, err := e.watchDeletions(ctx, in.CRDs)
	if err != nil {
		return res, err
	}
	defer deleted.stop()
	gone, err := e.watchGone(ctx, in.Namespace, in.CSVName)
	if err != nil {
		return res, err
	}
	second, err := e.StartCleaner(ctx, "csv-cleaner-resume-2")
	if err != nil {
		return res, err
	}
	defer func() { _ = second.Stop(30 * time.Second) }()
	select {
	case <-gone:
	case <-ctx.Done():
		return res, fmt.Errorf("waiting for CSV %s to go: %w", in.Key(), ctx.Err())
	}
	res.Complete = time.Since(second.Started)
	firstDelete, ok := deleted.firstAt()
	if !ok {
		return res, fmt.Errorf("no operand deletion was seen")
	}
	res.FirstDelete = firstDelete.Sub(second.Started)
	for _, c := range in.CRDs {
		if err := e.Client.Delete(ctx, in.CRDObject(c)); client.IgnoreNotFound(err) != nil {
			return res, err
		}
	}
	return res, nil
}

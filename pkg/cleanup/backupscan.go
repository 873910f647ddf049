package cleanup

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dependents"
)

// scanner reads, live, where the dependents of an uninstall are.
func (e *Engine) scanner() dependents.Scanner {
	return dependents.Scanner{Discovery: e.Discovery, Reader: e.APIReader}
}

// scanDependents reads where a dependent of the uninstall's deletions can be,
// follows ownerReferences from what deleted says is deleted (decide.Dependents)
// and decides what the backup must hold of the claims among them
// (decide.DecideVolume). An unreadable kind or a claim that cannot be
// snapshotted blocks.
func (e *Engine) scanDependents(ctx context.Context, v *cleanupv1alpha1.VeleroBackup, kinds []decide.CRDScope, deleted func(decide.OwnerRef, string) bool) ([]decide.Node, []decide.Volume, error) {
	began := time.Now()
	skip := map[string]bool{"events": true, "events.events.k8s.io": true}
	for _, k := range kinds {
		skip[decide.Held{Group: k.GVR.Group, Resource: k.GVR.Resource}.ResourceOf()] = true
	}
	s := e.scanner()
	scan, err := s.Scan(ctx, func(resource string) bool { return skip[resource] })
	if err != nil {
		return nil, nil, fmt.Errorf("reading where the uninstall's dependents are: %w", err)
	}
	if len(scan.Unread) > 0 {
		return nil, nil, unscanned(scan)
	}
	found := decide.Dependents(decide.ClosureInput{Nodes: scan.Nodes, Deleted: deleted})
	volumes, err := s.Volumes(ctx, found, v)
	if err != nil {
		return nil, nil, err
	}
	var problems []decide.Problem
	for _, vol := range volumes {
		if vol.Problem != nil {
			problems = append(problems, *vol.Problem)
		}
	}
	logr.FromContextOrDiscard(ctx).V(1).Info("Read the uninstall's dependents", "objects", len(scan.Nodes), "dependents", len(found), "volumes", len(volumes),
		"took", time.Since(began).Round(time.Millisecond).String())
	if len(problems) > 0 {
		return nil, nil, decide.JoinProblems(problems)
	}
	return found, volumes, nil
}

// unscanned is the problem of a scan that could not read some kinds.
func unscanned(scan *dependents.Scan) *decide.Problem {
	reason, fix := cleanupv1alpha1.BlockedBackupIncomplete, "it goes on by itself once they can be read"
	if scan.Forbidden {
		reason, fix = cleanupv1alpha1.BlockedForbidden, "grant csv-cleaner list on them (manifests/velero/dependents.yaml, docs/backup.md#rights)"
	}
	return &decide.Problem{Reason: reason, Object: "kinds " + strings.Join(scan.Unread, ", "),
		Message: fmt.Sprintf("csv-cleaner cannot read %d kinds that can hold objects the garbage collector would delete with the uninstall's deletions (%s), so no backup can be shown to hold everything it destroys: %s",
			len(scan.Unread), strings.Join(scan.Unread, ", "), fix)}
}

// dependents2Held are what a backup must hold of dependents.
func dependents2Held(nodes []decide.Node) []decide.Held { return dependents.Helds(nodes) }

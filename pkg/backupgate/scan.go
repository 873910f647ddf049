package backupgate

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/dependents"
)

// scanner reads, live, where the dependents of an uninstall are.
func (g *Gate) scanner() dependents.Scanner {
	return dependents.Scanner{Discovery: g.Discovery, Reader: g.Live}
}

// dependentsScan is what the gate read of an uninstall's dependents.
type dependentsScan struct {
	// nodes are every object read; found, the dependents among them.
	nodes   []decide.Node
	found   []decide.Node
	volumes []decide.Volume
	// unread are the kinds it could not read every object of, but those
	// csv-cleaner may not list (which block at once): whether they concern
	// the uninstall is decided against what it destroys (decide.JudgeUnread).
	unread []decide.UnreadKind
}

// scanDependents reads where a dependent of the uninstall's deletions can be,
// follows ownerReferences from what deleted says is deleted (decide.Dependents)
// and decides what the backup must hold of the claims among them
// (decide.DecideVolume). A kind csv-cleaner may not list, or a claim that
// cannot be snapshotted, blocks.
func (g *Gate) scanDependents(ctx context.Context, v *cleanupv1alpha1.VeleroBackup, kinds []decide.CRDScope, deleted func(decide.OwnerRef, string) bool) (*dependentsScan, error) {
	began := time.Now()
	s := g.scanner()
	scan, err := s.Scan(ctx, decide.ScanSkip(kinds))
	if err != nil {
		return nil, fmt.Errorf("reading where the uninstall's dependents are: %w", err)
	}
	if p := forbiddenProblem(scan); p != nil {
		return nil, p
	}
	found := decide.Dependents(decide.ClosureInput{Nodes: scan.Nodes, Deleted: deleted})
	volumes, err := s.Volumes(ctx, scan, found, v)
	if err != nil {
		return nil, err
	}
	var problems []decide.Problem
	for _, vol := range volumes {
		if vol.Problem != nil {
			problems = append(problems, *vol.Problem)
		}
	}
	logr.FromContextOrDiscard(ctx).V(1).Info("Read the uninstall's dependents", "objects", len(scan.Nodes), "dependents", len(found), "volumes", len(volumes),
		"unreadKinds", len(scan.Unread), "took", time.Since(began).Round(time.Millisecond).String())
	if len(problems) > 0 {
		return nil, decide.JoinProblems(problems)
	}
	return &dependentsScan{nodes: scan.Nodes, found: found, volumes: volumes, unread: scan.Unread}, nil
}

// forbiddenProblem blocks on the kinds csv-cleaner may not list: the garbage
// collector may, so their objects may be destroyed with the uninstall's,
// wherever they are.
func forbiddenProblem(scan *dependents.Scan) *decide.Problem {
	if !scan.Forbidden() {
		return nil
	}
	var forbidden []decide.UnreadKind
	for _, u := range scan.Unread {
		if u.Reason == decide.UnreadForbidden {
			forbidden = append(forbidden, u)
		}
	}
	_, p := decide.JudgeUnread(decide.UnreadInput{Kinds: forbidden, Reach: decide.Reach{Cluster: true}})
	return p
}

// unreadStatus is what the record keeps of the unread kinds that did not
// concern the uninstall, at most cleanupv1alpha1.MaxUnreadKinds.
func unreadStatus(kinds []decide.UnreadKind) []cleanupv1alpha1.UnreadKind {
	var out []cleanupv1alpha1.UnreadKind
	for _, u := range kinds[:min(len(kinds), cleanupv1alpha1.MaxUnreadKinds)] {
		out = append(out, cleanupv1alpha1.UnreadKind{Resource: u.Resource, Reason: u.Reason, Namespaces: u.Namespaces, Message: u.Message})
	}
	return out
}

package backupgate

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// whyFailed says at once why a Backup ended Failed, PartiallyFailed or
// FailedValidation, in the problem that blocks (the record) and an Event:
// Velero's count of errors, the first ones of its results and what to
// change (decide.BackupFailure). Velero answers the request for the
// results in tens of milliseconds: the pass waits up to downloadWait for
// them, else says what the Backup's status says.
func (g *Gate) whyFailed(ctx context.Context, tool backupTool, backup *velero.Backup, problem *decide.Problem) *decide.Problem {
	if backup.Phase == decide.BackupPhaseDeleting {
		return problem
	}
	now := time.Now()
	var failure decide.BackupFailure
	err := wait.PollUntilContextTimeout(ctx, downloadPoll, downloadWait, true, func(ctx context.Context) (bool, error) {
		var ready bool
		var err error
		failure, ready, err = tool.Failure(ctx, backup, now)
		return ready, err
	})
	if err != nil {
		logr.FromContextOrDiscard(ctx).Info("Could not read the results of Velero's failed Backup: saying what its status says", "backup", klog.KRef(g.pass.Settings.Backup.Velero.Namespace, backup.Name), "error", err.Error())
	}
	p := *problem
	p.Message = failure.Detail()
	g.pass.Event(corev1.EventTypeWarning, "BackupFailed", "Backup", "%s", p.Message)
	return &p
}

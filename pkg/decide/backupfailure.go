package decide

import (
	"fmt"
	"slices"
	"strings"
)

// firstErrors is how many of a failed Backup's errors the record names,
// each cut at maxErrorText bytes.
const (
	firstErrors  = 3
	maxErrorText = 400
)

// BackupFailure is what Velero says of a Backup that ended Failed,
// PartiallyFailed or FailedValidation: its status, and the errors of its
// results (BackupResults, as `velero backup describe --details` reads them).
type BackupFailure struct {
	Name, Phase string
	// Errors is status.errors; FailureReason, status.failureReason;
	// ValidationErrors, status.validationErrors.
	Errors           int64
	FailureReason    string
	ValidationErrors []string
	// Results are the errors of its results file, in Velero's order
	// (Velero's own, the cluster's, then each namespace's).
	Results []string
}

// Detail says why a Backup failed, at once, for the record and an Event:
// how many errors, the first ones, and what to change; and that nothing is
// deleted meanwhile.
func (f BackupFailure) Detail() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Velero's Backup %s is %s", f.Name, f.Phase)
	switch {
	case len(f.ValidationErrors) > 0:
		fmt.Fprintf(&b, ": %s", strings.Join(f.ValidationErrors, "; "))
	case f.FailureReason != "":
		fmt.Fprintf(&b, ": %s", f.FailureReason)
	}
	count := max(f.Errors, int64(len(f.Results)))
	if count > 0 {
		fmt.Fprintf(&b, "; %d errors", count)
	}
	if len(f.Results) > 0 {
		first := slices.Clone(f.Results[:min(len(f.Results), firstErrors)])
		for i, e := range first {
			if len(e) > maxErrorText {
				first[i] = e[:maxErrorText] + "…"
			}
		}
		fmt.Fprintf(&b, ", the first %d: %s", len(first), strings.Join(first, " | "))
	}
	if advice := f.advice(); advice != "" {
		fmt.Fprintf(&b, "; %s", advice)
	}
	fmt.Fprintf(&b, ": nothing is deleted without a complete backup (velero backup describe %s --details, velero backup logs %s)", f.Name, f.Name)
	return b.String()
}

// advice is what to change, read from the errors Velero gives.
func (f BackupFailure) advice() string {
	all := strings.Join(append(append([]string{f.FailureReason}, f.ValidationErrors...), f.Results...), "\n")
	switch {
	case strings.Contains(all, "rate limiter") || strings.Contains(all, "rate: Wait"):
		return "Velero's plugins waited on their client rate limiter past a CSI snapshot's 10-s early poll: raise the Velero server's --client-qps and --client-burst (its plugins take them from it), run fewer --item-block-worker-count, or unset CSI_SNAPSHOT_EARLY_FREQUENT_POLLING (docs/backup.md, Velero's settings)"
	case strings.Contains(all, "ReadyToUse") || strings.Contains(all, "timed out waiting") || strings.Contains(all, "context deadline exceeded"):
		return "a CSI snapshot did not become ready in time: look at the CSI driver and its snapshotter, or raise the Backup's csiSnapshotTimeout"
	case strings.Contains(all, "BackupStorageLocation") || strings.Contains(all, "storage location"):
		return "Velero's storage location is not usable: make it Available (velero backup-location get)"
	}
	return ""
}

// BackupWait is what the record says while the Backup of an attempt runs.
type BackupWait struct {
	Namespace, Name, Phase string
	Attempt                int32
	// Expected is ExpectedNote's; LastFailure, what Velero said of the
	// attempt before, when it failed.
	Expected, LastFailure string
}

// WaitingOnBackup is the record's message while the Backup of an attempt
// runs: its phase, how long it is expected to take, and after a failed
// attempt what Velero said of that one.
func WaitingOnBackup(w BackupWait) string {
	msg := fmt.Sprintf("Waiting for Velero's Backup %s/%s (%s) before anything is deleted", w.Namespace, w.Name, BackupPhaseOrNew(w.Phase))
	if w.Expected != "" {
		msg += "; " + w.Expected
	}
	if w.Attempt > 1 && w.LastFailure != "" {
		msg += fmt.Sprintf("; attempt %d, after: %s", w.Attempt, w.LastFailure)
	}
	return msg
}

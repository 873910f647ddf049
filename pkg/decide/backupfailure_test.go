package decide

import (
	"strings"
	"testing"
)

// TestBackupFailureDetail: a failed Backup is explained at once: the
// count, the first errors Velero gives, and what to change.
func TestBackupFailureDetail(t *testing.T) {
	rate := "name: /velero-data-7x4kq error: /failed to get volumesnapshot ns/velero-data-7x4kq: client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline"
	tests := []struct {
		name       string
		f          BackupFailure
		want, dont []string
	}{
		{name: "partially failed on the plugins' rate limiter",
			f:    BackupFailure{Name: "b-4", Phase: "PartiallyFailed", Errors: 34, Results: []string{rate, "e2", "e3", "e4"}},
			want: []string{"Backup b-4 is PartiallyFailed", "34 errors", "the first 3: " + rate + " | e2 | e3", "--client-qps", "--item-block-worker-count", "velero backup describe b-4 --details"},
			dont: []string{"e4"}},
		{name: "failed, with its reason and no results",
			f:    BackupFailure{Name: "b", Phase: "Failed", FailureReason: "error getting backup store: storage down"},
			want: []string{"Backup b is Failed: error getting backup store: storage down", "velero backup logs b"},
			dont: []string{"errors", "--client-qps"}},
		{name: "refused by validation",
			f:    BackupFailure{Name: "b", Phase: "FailedValidation", ValidationErrors: []string{"backup can't be created because BackupStorageLocation default is in Unavailable status."}},
			want: []string{"is FailedValidation: backup can't be created because BackupStorageLocation default is in Unavailable status.", "make it Available"}},
		{name: "a snapshot never ready",
			f:    BackupFailure{Name: "b", Phase: "PartiallyFailed", Errors: 1, Results: []string{"timed out waiting for VolumeSnapshot to be ReadyToUse"}},
			want: []string{"1 errors, the first 1:", "csiSnapshotTimeout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.f.Detail()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Detail() = %q\nlacks %q", got, w)
				}
			}
			for _, d := range tt.dont {
				if strings.Contains(got, d) {
					t.Errorf("Detail() = %q\nhas %q", got, d)
				}
			}
		})
	}
}

// TestWaitingOnBackup: while an attempt runs, the record says its phase,
// how long it is expected to take, and why the attempt before failed.
func TestWaitingOnBackup(t *testing.T) {
	got := WaitingOnBackup(BackupWait{Namespace: "velero", Name: "b-2", Attempt: 2, Expected: "expected about 3m20s", LastFailure: "Velero's Backup b is PartiallyFailed; 34 errors"})
	want := "Waiting for Velero's Backup velero/b-2 (New) before anything is deleted; expected about 3m20s; attempt 2, after: Velero's Backup b is PartiallyFailed; 34 errors"
	if got != want {
		t.Errorf("WaitingOnBackup =\n%s\nwant\n%s", got, want)
	}
	if got := WaitingOnBackup(BackupWait{Namespace: "velero", Name: "b", Phase: "InProgress", Attempt: 1, LastFailure: "stale"}); got != "Waiting for Velero's Backup velero/b (InProgress) before anything is deleted" {
		t.Errorf("WaitingOnBackup of a first attempt = %s", got)
	}
}

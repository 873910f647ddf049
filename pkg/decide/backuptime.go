package decide

import (
	"fmt"
	"time"
)

// VeleroPollMin is the soonest csv-cleaner looks again at what Velero is
// doing (a Backup, its resource list, a Restore, the claims it makes).
const VeleroPollMin = 100 * time.Millisecond

// VeleroPoll is when to look again at what Velero has been doing for so
// long: a fiftieth of it, between VeleroPollMin and a second. The one rule
// of the backup gate's wait on a Backup and the undo's on a Restore.
func VeleroPoll(running time.Duration) time.Duration {
	return min(max(running/50, VeleroPollMin), time.Second)
}

// claimSeconds is the time a Backup of csv-cleaner's took per claim it
// snapshots, by Velero's item-block workers, as `make bench` measured it
// (docs/performance.md says when and how).
var claimSeconds = []struct {
	workers int
	seconds float64
}{
	{1, 1.18},
	{8, 0.242},
	{16, 0.180},
}

// BackupExpected is how long a Backup of claims CSI snapshots is expected to
// take at Velero's item-block workers: claims times the time per claim
// measured at the most workers measured that are not more than workers.
// ok is false when nothing is known (no claim, no worker count).
func BackupExpected(claims, workers int) (time.Duration, bool) {
	if claims == 0 || workers < 1 {
		return 0, false
	}
	per := claimSeconds[0].seconds
	for _, m := range claimSeconds {
		if m.workers <= workers {
			per = m.seconds
		}
	}
	return max(time.Duration(float64(claims)*per*float64(time.Second)).Round(time.Second), time.Second), true
}

// ExpectedNote says how long Velero's Backup is expected to take, for the
// record's message and the plan; "" when it is not known.
func ExpectedNote(claims, workers int) string {
	d, ok := BackupExpected(claims, workers)
	if !ok {
		return ""
	}
	return fmt.Sprintf("Velero's Backup is expected to take about %s: %d claims' CSI snapshots at its %d item-block workers (docs/performance.md)", d, claims, workers)
}

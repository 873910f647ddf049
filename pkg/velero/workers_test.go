package velero

import "testing"

// TestWorkersOf reads the server's flag in both forms; without it, Velero's
// default of one worker.
func TestWorkersOf(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want int
	}{
		{[]string{"server", "--item-block-worker-count=8"}, 8},
		{[]string{"server", "--item-block-worker-count", "16"}, 16},
		{[]string{"server", "--features=EnableCSI"}, 1},
		{[]string{"server", "--item-block-worker-count=zero"}, 1},
		{[]string{"server", "--item-block-worker-count"}, 1},
	} {
		if got := workersOf(tt.args); got != tt.want {
			t.Errorf("workersOf(%q) = %d, want %d", tt.args, got, tt.want)
		}
	}
}

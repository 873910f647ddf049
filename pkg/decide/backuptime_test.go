package decide

import (
	"testing"
	"time"
)

// TestBackupExpected: claims times the measured time per claim at the
// most workers measured not above the count; unknown without claims.
func TestBackupExpected(t *testing.T) {
	for _, tt := range []struct {
		claims, workers int
		want            time.Duration
		ok              bool
	}{
		{1000, 1, 1180 * time.Second, true},
		{1000, 4, 1180 * time.Second, true},
		{1000, 8, 242 * time.Second, true},
		{1000, 12, 242 * time.Second, true},
		{1000, 16, 180 * time.Second, true},
		{1000, 32, 180 * time.Second, true},
		{1, 8, time.Second, true},
		{0, 8, 0, false},
		{10, 0, 0, false},
	} {
		got, ok := BackupExpected(tt.claims, tt.workers)
		if got != tt.want || ok != tt.ok {
			t.Errorf("BackupExpected(%d, %d) = %s, %v; want %s, %v", tt.claims, tt.workers, got, ok, tt.want, tt.ok)
		}
	}
}

func TestVeleroPoll(t *testing.T) {
	for _, c := range []struct{ running, want time.Duration }{
		{0, VeleroPollMin},
		{time.Second, VeleroPollMin},
		{10 * time.Second, 200 * time.Millisecond},
		{time.Minute, time.Second},
		{time.Hour, time.Second},
	} {
		if got := VeleroPoll(c.running); got != c.want {
			t.Errorf("VeleroPoll(%s) = %s, want %s", c.running, got, c.want)
		}
	}
}

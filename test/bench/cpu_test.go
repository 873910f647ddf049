package bench

import (
	"os"
	"testing"
)

func TestCPUTicks(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       uint64
		wantErr    bool
	}{
		{name: "kube-apiserver", stat: "4242 (kube-apiserver) S 1 4242 4242 0 -1 4194560 80113 0 0 0 1532 287 0 0 20 0 12 0 9876 1800000000 50000 18446744073709551615",
			want: 1532 + 287},
		{name: "a command name with spaces and parentheses", stat: "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 10 5 0 0 20 0 1 0 1 0 0",
			want: 15},
		{name: "no command name", stat: "7 a R 1", wantErr: true},
		{name: "cut short", stat: "7 (etcd) S 1 7 7 0 -1 0 0 0 0", wantErr: true},
		{name: "not a number", stat: "7 (etcd) S 1 7 7 0 -1 0 0 0 0 0 x 5 0", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cpuTicks([]byte(tc.stat))
			if (err != nil) != tc.wantErr {
				t.Fatalf("cpuTicks() error = %v, want error %t", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("cpuTicks() = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestCPUSecondsOfThisProcess reads this test's own /proc entry after some
// work: the CPU it used shows.
func TestCPUSecondsOfThisProcess(t *testing.T) {
	for i := 0; i < 50_000_000; i++ { // about 20 ms of work, more than a tick
		_ = i * i
	}
	got, err := cpuSeconds(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got <= 0 {
		t.Errorf("cpuSeconds(self) = %v, want more than 0", got)
	}
}

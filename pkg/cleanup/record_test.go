package cleanup

import (
	"fmt"
	"slices"
	"testing"
	"time"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

func TestRecordCountAcrossPasses(t *testing.T) {
	rec := &record{st: &cleanupv1alpha1.UninstallStatus{}}
	const kind = "Widget.example.com"
	// Pass 1: 3 live operands found and deleted, 1 holds a finalizer.
	rec.count(kind, 3, 1, map[string]int{cleanupv1alpha1.KeepOutsideTargets: 2})
	// Pass 2: only the terminating one is listed now.
	rec.count(kind, 1, 1, map[string]int{cleanupv1alpha1.KeepOutsideTargets: 2})
	got := rec.st.Counts[0]
	if got.Found != 3 || got.Deleted != 2 || got.Remaining != 1 || rec.st.Remaining != 1 {
		t.Fatalf("after two passes: %+v, total remaining %d", got, rec.st.Remaining)
	}
	// Pass 3: timed out with Orphan: the last one is kept, not deleted.
	rec.count(kind, 1, 0, map[string]int{cleanupv1alpha1.KeepOutsideTargets: 2, cleanupv1alpha1.KeepTimedOut: 1})
	got = rec.st.Counts[0]
	if got.Found != 3 || got.Deleted != 2 || got.Remaining != 0 || len(got.Kept) != 2 {
		t.Fatalf("after the timeout: %+v", got)
	}
	// A kind with nothing, now or before, gets no entry.
	rec.count("Empty.example.com", 0, 0, nil)
	if len(rec.st.Counts) != 1 {
		t.Fatalf("an empty kind must not be recorded: %+v", rec.st.Counts)
	}
}

func TestRecordBlockingIsBounded(t *testing.T) {
	rec := &record{st: &cleanupv1alpha1.UninstallStatus{}}
	var refs []cleanupv1alpha1.ObjectRef
	for i := range 50 {
		refs = append(refs, cleanupv1alpha1.ObjectRef{Kind: "Widget", Namespace: "ns", Name: string(rune('a' + i%26))})
	}
	rec.setBlocking(refs)
	if len(rec.st.Blocking) != cleanupv1alpha1.MaxBlocking {
		t.Fatalf("blocking has %d entries, want at most %d", len(rec.st.Blocking), cleanupv1alpha1.MaxBlocking)
	}
}

func TestRequeueAfter(t *testing.T) {
	deleted := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	u := func(elapsed, timeout time.Duration) *Uninstall {
		return &Uninstall{deletion: deleted, now: deleted.Add(elapsed), settings: decide.Settings{OperandTimeout: timeout}}
	}
	tests := []struct {
		name             string
		elapsed, timeout time.Duration
		want             time.Duration
	}{
		{"soon at first", 0, time.Hour, 500 * time.Millisecond},
		{"grows with age", 40 * time.Second, time.Hour, 10 * time.Second},
		{"at most 30 s", time.Hour, 2 * time.Hour, 30 * time.Second},
		{"wakes up when the timeout falls due", 9*time.Minute + 55*time.Second, 10 * time.Minute, 5*time.Second + 100*time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := u(tt.elapsed, tt.timeout).requeueAfter(); got != tt.want {
				t.Errorf("requeueAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBoundKept(t *testing.T) {
	ref := func(name, reason string) cleanupv1alpha1.ObjectRef {
		return cleanupv1alpha1.ObjectRef{Kind: "Widget.example.com", Namespace: "a", Name: name, Reason: reason}
	}
	var many []cleanupv1alpha1.ObjectRef
	for i := range 40 {
		many = append(many, ref(fmt.Sprintf("outside-%02d", i), cleanupv1alpha1.KeepOutsideTargets))
	}
	many = append(many, ref("orphaned", cleanupv1alpha1.KeepPolicyOrphan), ref("shared", cleanupv1alpha1.KeepSharedWithCSV),
		ref("unproven", cleanupv1alpha1.KeepUnproven), ref("late", cleanupv1alpha1.KeepCreatedAfterDeletion))
	got := boundKept(many)
	if len(got) != cleanupv1alpha1.MaxKept {
		t.Fatalf("boundKept kept %d, want %d", len(got), cleanupv1alpha1.MaxKept)
	}
	var first []string
	for _, r := range got[:4] {
		first = append(first, r.Name)
	}
	if want := []string{"late", "shared", "unproven", "outside-00"}; !slices.Equal(first, want) {
		t.Errorf("boundKept starts with %v, want %v: the most specific reasons first, then by name", first, want)
	}
	if slices.ContainsFunc(got, func(r cleanupv1alpha1.ObjectRef) bool { return r.Name == "orphaned" }) {
		t.Error("boundKept kept a PolicyOrphan object over OutsideTargets ones")
	}
}

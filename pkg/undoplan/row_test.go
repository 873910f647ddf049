package undoplan

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// TestRows: before the Restore, an object is present, missing (and
// restored) or of a kind that could not be listed (and not restored).
func TestRows(t *testing.T) {
	found := map[decide.Held]Found{widget: {There: true}, secret: {}, claim: {Unread: "secrets could not be listed"}}
	rows, missing := Rows([]decide.Held{widget, secret, claim}, func(h decide.Held) Found { return found[h] })
	if !reflect.DeepEqual(missing, []decide.Held{secret}) {
		t.Errorf("missing = %v, want the Secret", missing)
	}
	want := []string{StatePresent, StateMissing, StateUnread}
	for i, row := range rows {
		if row.State != want[i] {
			t.Errorf("row %d %v: %s, want %s", i, row.Object, row.State, want[i])
		}
	}
	if rows[2].Problem == "" {
		t.Error("an unread row says nothing of why it was not restored")
	}
}

// TestSettle: once the Restore ended, the Restore's label makes a row
// restored; a restored claim with a snapshot must be bound to a volume
// made from it.
func TestSettle(t *testing.T) {
	bound := func(source string) *corev1.PersistentVolumeClaim {
		pvc := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-1"}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
		if source != "" {
			pvc.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "VolumeSnapshot", Name: source}
		}
		return pvc
	}
	link := &Link{Linked: []string{"Widget.example.com a/db"}}
	for _, tt := range []struct {
		name          string
		row           Row
		after         After
		state, volume string
		problem       string
		owners        []string
	}{
		{"restored and linked", Row{Object: secret, State: StatePresent}, After{Restored: true, Link: link}, StateRestored, "", "", link.Linked},
		{"present before", Row{Object: secret, State: StatePresent}, After{}, StatePresent, "", "", nil},
		{"a claim from its snapshot", Row{Object: claim, State: StatePresent}, After{Restored: true, Claim: bound("snap-1"), Snapshot: true}, StateRestored, "pv-1, from snapshot snap-1", "", nil},
		{"a claim not from its snapshot", Row{Object: claim, State: StatePresent}, After{Restored: true, Claim: bound(""), Snapshot: true}, StateRestored, "pv-1", "bound to a volume not made from its snapshot", nil},
		{"a claim pending", Row{Object: claim, State: StatePresent}, After{Restored: true, Claim: &corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}, Snapshot: true}, StateRestored, "Pending", "not bound to a volume", nil},
		{"a claim there before", Row{Object: claim, State: StatePresent}, After{Claim: bound(""), Snapshot: true}, StatePresent, "pv-1", "", nil},
		{"a claim still missing", Row{Object: claim, State: StateMissing}, After{Snapshot: true}, StateMissing, "", "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Settle(tt.row, tt.after)
			if got.State != tt.state || got.Volume != tt.volume || got.Problem != tt.problem || !reflect.DeepEqual(got.Owners, tt.owners) {
				t.Errorf("Settle = %+v; want state %s, volume %q, problem %q, owners %v", got, tt.state, tt.volume, tt.problem, tt.owners)
			}
		})
	}
}

// TestBinding: a restored claim is waited for only while Velero's
// provisioner makes it from its snapshot: Pending with the VolumeSnapshot
// as its data source, and the Backup holding its snapshot.
func TestBinding(t *testing.T) {
	fromSnapshot := &corev1.TypedLocalObjectReference{Kind: "VolumeSnapshot", Name: "velero-data-x1"}
	claim := func(phase corev1.PersistentVolumeClaimPhase, source *corev1.TypedLocalObjectReference) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{DataSource: source}, Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
	}
	tests := []struct {
		name     string
		pvc      *corev1.PersistentVolumeClaim
		snapshot bool
		want     bool
	}{
		{"pending, made from its snapshot", claim(corev1.ClaimPending, fromSnapshot), true, true},
		{"bound already", claim(corev1.ClaimBound, fromSnapshot), true, false},
		{"pending with no snapshot source: nothing will bind it from the Backup", claim(corev1.ClaimPending, nil), true, false},
		{"no snapshot in the Backup", claim(corev1.ClaimPending, fromSnapshot), false, false},
		{"lost", claim(corev1.ClaimLost, fromSnapshot), true, false},
		{"not there", nil, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Binding(tt.pvc, tt.snapshot); got != tt.want {
				t.Errorf("Binding = %v, want %v", got, tt.want)
			}
		})
	}
}

package decide

import (
	"reflect"
	"testing"
)

func TestJudgeDenials(t *testing.T) {
	widgets := Problem{Reason: "Forbidden", Object: "Widget.example.com", Message: "csv-cleaner may not delete widgets"}
	gadgets := Problem{Reason: "Forbidden", Object: "Gadget.example.com", Message: "csv-cleaner may not list gadgets"}
	sa := func(denied ...Problem) IdentityDenials {
		return IdentityDenials{Identity: "ServiceAccount ops/cleaner", Decisive: true, Denied: denied}
	}
	for _, tt := range []struct {
		name      string
		ids       []IdentityDenials
		refusals  []Problem
		noteCount int
	}{
		{"one identity, denied: the run meets it", []IdentityDenials{sa(widgets)}, []Problem{widgets}, 0},
		{"one identity, allowed", []IdentityDenials{sa()}, nil, 0},
		{"denied to every identity", []IdentityDenials{sa(widgets, gadgets), {Identity: "User dev", Decisive: true, Denied: []Problem{widgets}}}, []Problem{widgets}, 1},
		{"denied to one of two: a note, never a refusal", []IdentityDenials{sa(widgets), {Identity: "User dev", Decisive: true}}, nil, 1},
		{"a user whose groups are unknown: a note", []IdentityDenials{{Identity: "User dev", Denied: []Problem{widgets}}}, nil, 1},
		{"no identity", nil, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			refusals, notes := JudgeDenials(tt.ids)
			if !reflect.DeepEqual(refusals, tt.refusals) {
				t.Errorf("refusals = %v, want %v", refusals, tt.refusals)
			}
			if len(notes) != tt.noteCount {
				t.Errorf("notes = %q, want %d", notes, tt.noteCount)
			}
		})
	}
}

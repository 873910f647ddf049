package decide

import (
	"slices"
	"testing"
)

func TestFinalizersEnsure(t *testing.T) {
	f := Finalizers{Current: "cleanup.csv-cleaner.io/uninstall", Legacy: []string{"csv-cleaner.io/old", "cleaner/older"}}
	tests := []struct {
		name    string
		in      []string
		want    []string
		changed bool
	}{
		{"empty", nil, []string{f.Current}, true},
		{"OLM's finalizer kept first", []string{OLMFinalizer}, []string{OLMFinalizer, f.Current}, true},
		{"already there", []string{OLMFinalizer, f.Current}, []string{OLMFinalizer, f.Current}, false},
		{"legacy replaced in place", []string{"a", "csv-cleaner.io/old", "b"}, []string{"a", f.Current, "b"}, true},
		{"two legacy and current collapse to one", []string{"cleaner/older", "a", f.Current, "csv-cleaner.io/old"}, []string{f.Current, "a"}, true},
		{"duplicate current collapses", []string{f.Current, f.Current}, []string{f.Current}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			got, changed := f.Ensure(tt.in)
			if !slices.Equal(got, tt.want) || changed != tt.changed {
				t.Errorf("Ensure(%v) = %v, %v; want %v, %v", tt.in, got, changed, tt.want, tt.changed)
			}
			if !slices.Equal(in, tt.in) {
				t.Errorf("Ensure changed its input: %v", tt.in)
			}
		})
	}
}

func TestFinalizersRemove(t *testing.T) {
	f := Finalizers{Current: "cleanup.csv-cleaner.io/uninstall", Legacy: []string{"csv-cleaner.io/old"}}
	tests := []struct {
		name    string
		in      []string
		want    []string
		changed bool
	}{
		{"none of ours", []string{OLMFinalizer, "x"}, []string{OLMFinalizer, "x"}, false},
		{"current", []string{OLMFinalizer, f.Current, "x"}, []string{OLMFinalizer, "x"}, true},
		{"current and legacy", []string{"csv-cleaner.io/old", OLMFinalizer, f.Current}, []string{OLMFinalizer}, true},
		{"only ours", []string{f.Current}, []string{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := f.Remove(tt.in)
			if !slices.Equal(got, tt.want) || changed != tt.changed {
				t.Errorf("Remove(%v) = %v, %v; want %v, %v", tt.in, got, changed, tt.want, tt.changed)
			}
		})
	}
	if !f.HeldBy([]string{"x", "csv-cleaner.io/old"}) || f.HeldBy([]string{OLMFinalizer}) {
		t.Error("HeldBy must count legacy names as ours and OLM's as not")
	}
}

package finalizer

import (
	"slices"
	"testing"
)

func TestWithout(t *testing.T) {
	const hold = "cleanup.csv-cleaner.io/rbac-hold"
	for _, tc := range []struct {
		in, want []string
	}{
		{[]string{"a", hold, "b"}, []string{"a", "b"}},
		{[]string{hold}, []string{}},
		{[]string{"a"}, []string{"a"}},
		{nil, []string{}},
	} {
		if got := Without(tc.in, Is(hold)); !slices.Equal(got, tc.want) || got == nil {
			t.Errorf("Without(%v) = %#v, want %#v (never nil)", tc.in, got, tc.want)
		}
	}
}

func TestHas(t *testing.T) {
	ours := func(s string) bool { return s == "x" || s == "legacy" }
	for _, tc := range []struct {
		in   []string
		want bool
	}{
		{[]string{"a", "legacy"}, true},
		{[]string{"x"}, true},
		{[]string{"a", "b"}, false},
		{nil, false},
	} {
		if got := Has(tc.in, ours); got != tc.want {
			t.Errorf("Has(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

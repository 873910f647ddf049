package finalizer

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func TestWritten(t *testing.T) {
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: "5"}}
	var none *Written
	none.Note(obj)
	if none.Behind(obj) {
		t.Error("a nil Written remembers nothing")
	}
	w := &Written{}
	if w.Behind(obj) {
		t.Error("an object never written is not behind")
	}
	w.Note(obj)
	stale := obj.DeepCopy()
	stale.ResourceVersion = "4"
	if !w.Behind(stale) {
		t.Error("a copy from before the patch is behind")
	}
	if w.Behind(obj) {
		t.Error("the copy the patch made is not behind")
	}
	if w.Behind(stale) {
		t.Error("once the cache has shown the patch, it is forgotten")
	}

	obj.Finalizers = []string{"ours"}
	w.Note(obj)
	if rv, f, behind := w.Last(stale); !behind || rv != "5" || !slices.Equal(f, []string{"ours"}) {
		t.Errorf("Last(an older copy) = %q %v %v, want the patch's version 5 and finalizers", rv, f, behind)
	}
	newer := obj.DeepCopy()
	newer.ResourceVersion = "7"
	if _, _, behind := w.Last(newer); behind {
		t.Error("a copy newer than the patch (someone wrote since) is not behind")
	}
	w.Note(obj)
	opaque := obj.DeepCopy()
	opaque.ResourceVersion = "not-a-number"
	if rv, _, behind := w.Last(opaque); !behind || rv != "" {
		t.Errorf("Last(a copy whose version is no number) = %q %v, want behind with nothing to go by (read live)", rv, behind)
	}
}

func TestSubset(t *testing.T) {
	for _, tt := range []struct {
		a, b []string
		want bool
	}{
		{nil, nil, true},
		{[]string{"x"}, []string{"x", "y"}, true},
		{[]string{"y", "x"}, []string{"x", "y"}, true},
		{[]string{"x", "z"}, []string{"x", "y"}, false},
		{[]string{"x"}, nil, false},
	} {
		if got := Subset(tt.a, tt.b); got != tt.want {
			t.Errorf("Subset(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

package dependents

import (
	"errors"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// TestCorruptObjects reads the objects a StorageReadError names, as
// kube-apiserver 1.37 answers a LIST with objects it cannot read: a cause
// per object, its storage key in the field.
func TestCorruptObjects(t *testing.T) {
	storeRead := func(keys ...string) error {
		var causes []metav1.StatusCause
		for _, k := range keys {
			causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeUnexpectedServerResponse, Field: k, Message: "StorageError: corrupt object"})
		}
		causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeTooMany, Message: "too many errors, the list is truncated"})
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 500, Reason: metav1.StatusReasonStoreReadError,
			Details: &metav1.StatusDetails{Causes: causes}}}
	}
	gadget := decide.Held{Group: "gc.example.com", Kind: "Gadget", Resource: "gadgets"}
	in := func(ns, name string) decide.Held { h := gadget; h.Namespace, h.Name = ns, name; return h }
	tests := []struct {
		name       string
		namespaced bool
		err        error
		want       []decide.Held
	}{
		{"namespaced custom resources", true, storeRead("/registry/gc.example.com/gadgets/n1/g1", "/registry/gc.example.com/gadgets/n3/g3"), []decide.Held{in("n1", "g1"), in("n3", "g3")}},
		{"a cluster-scoped kind", false, storeRead("/registry/gc.example.com/gadgets/g1"), []decide.Held{in("", "g1")}},
		{"another etcd prefix", true, storeRead("/custom/prefix/gc.example.com/gadgets/n1/g1"), []decide.Held{in("n1", "g1")}},
		{"no causes", true, &apierrors.StatusError{ErrStatus: metav1.Status{Reason: metav1.StatusReasonStoreReadError}}, nil},
		{"not an API status", true, errors.New("connection refused"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CorruptObjects(gadget, tt.namespaced, tt.err); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestTruncated: a StorageReadError names at most a hundred objects; one
// that says it was cut (a TooMany cause), or names nothing, cannot be
// counted on to name every object nobody can read.
func TestTruncated(t *testing.T) {
	withCauses := func(causes ...metav1.StatusCause) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Code: 500, Reason: metav1.StatusReasonStoreReadError, Details: &metav1.StatusDetails{Causes: causes}}}
	}
	one := metav1.StatusCause{Type: metav1.CauseTypeUnexpectedServerResponse, Field: "/registry/gc.example.com/gadgets/n1/g1"}
	for _, tt := range []struct {
		name      string
		err       error
		truncated bool
		storeRead bool
	}{
		{"every object named", withCauses(one), false, true},
		{"cut at a hundred", withCauses(one, metav1.StatusCause{Type: metav1.CauseTypeTooMany}), true, true},
		{"no details", &apierrors.StatusError{ErrStatus: metav1.Status{Reason: metav1.StatusReasonStoreReadError}}, true, true},
		{"not an API status", errors.New("EOF"), true, false},
	} {
		if got := truncated(tt.err); got != tt.truncated {
			t.Errorf("%s: truncated = %v, want %v", tt.name, got, tt.truncated)
		}
		if got := storeReadError(tt.err); got != tt.storeRead {
			t.Errorf("%s: storeReadError = %v, want %v", tt.name, got, tt.storeRead)
		}
	}
}

package refusal

import (
	"errors"
	"fmt"

	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

func TestClassify(t *testing.T) {
	widgets := schema.GroupResource{Group: "conv.example.com", Resource: "widgets"}
	status := func(code int32, reason metav1.StatusReason, msg string) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg}}
	}
	tests := []struct {
		name        string
		err         error
		want        string // "" when not a refusal
		source      string
		unreachable bool
	}{
		{name: "fail-closed webhook that cannot be called",
			err:  apierrors.NewInternalError(errors.New(`failed calling webhook "vwidget.example.com": failed to call webhook: Post "https://127.0.0.1:1/?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused`)),
			want: cleanupv1alpha1.BlockedAdmissionRefused, source: "vwidget.example.com", unreachable: true},
		{name: "webhook denial",
			err:  status(400, metav1.StatusReasonBadRequest, `admission webhook "deny.example.com" denied the request: widgets are kept`),
			want: cleanupv1alpha1.BlockedAdmissionRefused, source: "deny.example.com"},
		{name: "webhook denial without explanation, as Forbidden",
			err:  status(403, metav1.StatusReasonForbidden, `admission webhook "deny.example.com" denied the request without explanation`),
			want: cleanupv1alpha1.BlockedAdmissionRefused, source: "deny.example.com"},
		{name: "admission policy",
			err:  status(403, metav1.StatusReasonForbidden, `widgets.conv.example.com "w1" is forbidden: ValidatingAdmissionPolicy 'keep-widgets' with binding 'keep-widgets-binding' denied request: kept`),
			want: cleanupv1alpha1.BlockedAdmissionRefused, source: "keep-widgets"},
		{name: "conversion webhook",
			err:  apierrors.NewInternalError(errors.New(`conversion webhook for conv.example.com/v1, Kind=Widget failed: Post "https://127.0.0.1:1/convert?timeout=30s": dial tcp 127.0.0.1:1: connect: connection refused`)),
			want: cleanupv1alpha1.BlockedConversionFailed, source: "conv.example.com/v1, Kind=Widget"},
		{name: "RBAC", err: apierrors.NewForbidden(widgets, "w1", errors.New(`User "x" cannot delete resource "widgets"`)), want: cleanupv1alpha1.BlockedForbidden},
		{name: "wrapped", err: fmt.Errorf("deleting Widget a/w1: %w", apierrors.NewForbidden(widgets, "w1", errors.New("no"))), want: cleanupv1alpha1.BlockedForbidden},

		{name: "conflict", err: apierrors.NewConflict(widgets, "w1", errors.New("changed"))},
		{name: "throttled", err: apierrors.NewTooManyRequests("slow down", 1)},
		{name: "unavailable", err: apierrors.NewServiceUnavailable("restarting")},
		{name: "not an API error", err: errors.New("connection reset")},
		{name: "nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Classify(tt.err)
			if ok != (tt.want != "") || got.Reason != tt.want || got.Source != tt.source || got.Unreachable != tt.unreachable {
				t.Errorf("Classify = %+v, %v; want reason %q, source %q, unreachable %v", got, ok, tt.want, tt.source, tt.unreachable)
			}
		})
	}
}

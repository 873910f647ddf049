package refusal

import (
	"errors"

	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// Refusal is the API server's refusal of a request, as Classify reads it.
type Refusal struct {
	// Reason is the class: cleanupv1alpha1.BlockedAdmissionRefused, cleanupv1alpha1.BlockedConversionFailed or cleanupv1alpha1.BlockedForbidden.
	Reason string
	// Source is the webhook or admission policy the API server names, if any.
	Source string
	// Unreachable is set when a webhook could not be called at all.
	Unreachable bool
	// Message is the API server's message.
	Message string
}

// Classify tells a refusal (one that the same request, retried,
// meets again until someone acts) from a passing failure, by the API
// server's status message: the webhook dispatchers, the admission policy
// plugin and the CRD conversion all name what refused in their messages.
// ok is false for any other error.
func Classify(err error) (Refusal, bool) {
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) {
		return Refusal{}, false
	}
	msg := status.Status().Message
	r := Refusal{Message: msg}
	switch {
	case strings.Contains(msg, "conversion webhook for "):
		r.Reason, r.Source = cleanupv1alpha1.BlockedConversionFailed, between(msg, "conversion webhook for ", " failed")
	case strings.Contains(msg, `failed calling webhook "`):
		r.Reason, r.Source, r.Unreachable = cleanupv1alpha1.BlockedAdmissionRefused, between(msg, `failed calling webhook "`, `"`), true
	case strings.Contains(msg, `admission webhook "`) && strings.Contains(msg, "denied the request"):
		r.Reason, r.Source = cleanupv1alpha1.BlockedAdmissionRefused, between(msg, `admission webhook "`, `"`)
	case strings.Contains(msg, "AdmissionPolicy '") && strings.Contains(msg, "denied request"):
		r.Reason, r.Source = cleanupv1alpha1.BlockedAdmissionRefused, between(msg, "AdmissionPolicy '", "'")
	case apierrors.IsForbidden(err):
		r.Reason = cleanupv1alpha1.BlockedForbidden
	default:
		return Refusal{}, false
	}
	return r, true
}

// between returns the text of s between the first start and the next end after it.
func between(s, start, end string) string {
	_, after, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(after, end)
	return name
}

// Advice says what an admin can do about a refusal.
func (r Refusal) Advice() string {
	switch r.Reason {
	case cleanupv1alpha1.BlockedConversionFailed:
		return "the CRD's conversion webhook fails, so its instances cannot be read; bring the operator back, or set the CRD's spec.conversion to None"
	case cleanupv1alpha1.BlockedForbidden:
		return "grant csv-cleaner the right (docs/rights.md, \"What csv-cleaner may do, and why\")"
	case cleanupv1alpha1.BlockedAdmissionRefused:
		if r.Unreachable {
			return "the webhook " + quote(r.Source) + " cannot be called; bring its service back or remove its configuration, or let onTimeout apply once operandTimeout has passed"
		}
		return quote(r.Source) + " refuses it; change or remove that webhook or policy, or let onTimeout apply once operandTimeout has passed"
	}
	return ""
}

func quote(s string) string {
	if s == "" {
		return "an admission check"
	}
	return `"` + s + `"`
}

package cleanup

import (
	"context"
	"fmt"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/refusal"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Setting a CRD's spec.conversion to None takes update on every CRD: RBAC
// cannot narrow it; the admission policy of manifests/admission lets
// csv-cleaner change nothing else, and only on CRDs with OLM's provenance.
// update, not patch: a patch (server-side apply) can create a CRD, an
// update cannot (operator-framework's good-practices validator warns of
// patch on CRDs for that reason).
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=update

// disableConversion sets the CRD's spec.conversion to None, exactly as OLM
// does once the CSV is gone and no CSV replaces it (operator-lifecycle-manager
// PR 2832), which csv-cleaner's finalizer would otherwise delay until the
// operands it cannot list are gone. It reports whether it changed the CRD.
func (e *Engine) disableConversion(ctx context.Context, u *Uninstall, s *decide.CRDScope, refused refusal.Refusal) (bool, error) {
	// The CRD was read live in this pass; its resourceVersion guards the update.
	crd := s.CRD.DeepCopy()
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	err := e.Client.Update(ctx, crd)
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return false, nil // read again on the next pass
	case err != nil:
		return false, fmt.Errorf("setting the conversion of CRD %s to None: %w", s.Name, err)
	}
	e.Event(u.subject, corev1.EventTypeWarning, "ConversionDisabled", "Uninstall",
		"Set the conversion of CRD %s to None, as OLM does once the CSV is gone: its conversion webhook fails while the operator is unavailable (%s)", s.Name, refused.Message)
	return true, nil
}

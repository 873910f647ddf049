package cleanup

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// Setting a CRD's spec.conversion to None takes update on every CRD: RBAC
// cannot narrow it; the admission policy of manifests/admission lets
// csv-cleaner change nothing else, and only on CRDs with OLM's provenance.
// update, not patch: a patch (server-side apply) can create a CRD, an
// update cannot (operator-framework's good-practices validator warns of
// patch on CRDs for that reason).
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=update

// mayDisableConversion says whether the conversion webhook of a CRD whose
// instances cannot be listed may be turned off: the policy allows it, the
// CRD carries OLM's provenance for this CSV, no other live CSV owns it, and
// it converts through a webhook. The uninstall itself says that no CSV
// replaces this one (Classify), and the caller that the operator, who would
// serve the webhook, is unavailable. Pure.
func mayDisableConversion(s CRDScope, settings Settings) bool {
	conv := s.CRD.Spec.Conversion
	return settings.ConversionWebhooks != cleanupv1alpha1.ConversionKeep && s.Proven && len(s.Others) == 0 &&
		conv != nil && conv.Strategy == apiextensionsv1.WebhookConverter
}

// disableConversion sets the CRD's spec.conversion to None, exactly as OLM
// does once the CSV is gone and no CSV replaces it (operator-lifecycle-manager
// PR 2832), which csv-cleaner's finalizer would otherwise delay until the
// operands it cannot list are gone. It reports whether it changed the CRD.
func (r *Reconciler) disableConversion(ctx context.Context, u *uninstall, s *CRDScope, refusal Refusal) (bool, error) {
	// The CRD was read live in this pass; its resourceVersion guards the update.
	crd := s.CRD.DeepCopy()
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	err := r.Client.Update(ctx, crd)
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return false, nil // read again on the next pass
	case err != nil:
		return false, fmt.Errorf("setting the conversion of CRD %s to None: %w", s.Name, err)
	}
	r.event(u.csv, corev1.EventTypeWarning, "ConversionDisabled", "Uninstall",
		"Set the conversion of CRD %s to None, as OLM does once the CSV is gone: its conversion webhook fails while the operator is unavailable (%s)", s.Name, refusal.Message)
	return true, nil
}

package decide

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// CRDFate decides what happens to an owned CRD that exists: it is deleted
// only with crds: Delete, when it carries OLM's provenance for this CSV, no
// other live CSV owns it, and no instance of it is left (instancesLeft:
// deleting a CRD deletes every instance, whoever made it).
func CRDFate(s Settings, scope CRDScope, instancesLeft bool) Item {
	it := Item{Action: ActionKeep, Kind: CRDKind, Name: scope.Name}
	switch {
	case s.CRDs != cleanupv1alpha1.Delete:
		it.Reason = cleanupv1alpha1.KeepPolicyOrphan
	case !scope.Proven:
		it.Reason = cleanupv1alpha1.KeepUnproven
	case len(scope.Others) > 0:
		it.Reason = cleanupv1alpha1.KeepSharedCRD
	case instancesLeft:
		it.Reason = cleanupv1alpha1.KeepHasInstances
	default:
		it.Action, it.Reason = ActionDelete, DeleteInstalledAlongside
	}
	return it
}

// CRDKind is how records and plans name the CustomResourceDefinition kind.
var CRDKind = apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition").Kind + "." + apiextensionsv1.GroupName

// MayDisableConversion says whether the conversion webhook of a CRD whose
// instances cannot be listed may be turned off: the policy allows it, the
// CRD carries OLM's provenance for this CSV, no other live CSV owns it, and
// it converts through a webhook. The uninstall itself says that no CSV
// replaces this one (Classify), and the caller that the operator, who would
// serve the webhook, is unavailable.
func MayDisableConversion(scope CRDScope, s Settings) bool {
	conv := scope.CRD.Spec.Conversion
	return s.ConversionWebhooks != cleanupv1alpha1.ConversionKeep && scope.Proven && len(scope.Others) == 0 &&
		conv != nil && conv.Strategy == apiextensionsv1.WebhookConverter
}

// ConversionFate decides, for an owned CRD whose conversion webhook fails,
// whether the uninstall turns conversion off first (ok: MayDisableConversion
// allows it and the operator is unavailable) or is blocked on the kind
// (ConversionFailed).
func ConversionFate(scope CRDScope, s Settings, operatorUnavailable bool) (it Item, ok bool) {
	if !operatorUnavailable || !MayDisableConversion(scope, s) {
		return Item{}, false
	}
	return Item{Action: ActionUpdate, Kind: CRDKind, Name: scope.Name, Reason: UpdateConversionNone,
		Message: "its conversion webhook fails while the operator is unavailable: the uninstall sets spec.conversion to None, as OLM does once the CSV is gone, and then reads and decides its instances"}, true
}

// StoredVersions are the versions of the CRD, other than the one its
// instances are listed at, that objects may still be stored at and that
// are served: reading at a version an object is stored at needs no
// conversion, so a plan can read the instances there while the conversion
// webhook fails (unless some object is stored at another version).
func StoredVersions(scope CRDScope) []string {
	if scope.CRD == nil {
		return nil
	}
	served := map[string]bool{}
	for _, v := range scope.CRD.Spec.Versions {
		served[v.Name] = v.Served
	}
	var out []string
	for _, v := range scope.CRD.Status.StoredVersions {
		if v != scope.GVR.Version && served[v] {
			out = append(out, v)
		}
	}
	return out
}

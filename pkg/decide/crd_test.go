package decide

import (
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

func TestMayDisableConversion(t *testing.T) {
	webhook := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter}}}
	none := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}}}
	disable := Settings{ConversionWebhooks: cleanupv1alpha1.ConversionDisable}
	for _, tt := range []struct {
		name     string
		scope    CRDScope
		settings Settings
		want     bool
	}{
		{"proven, not shared, a webhook", CRDScope{CRD: webhook, Proven: true}, disable, true},
		{"the policy keeps it", CRDScope{CRD: webhook, Proven: true}, Settings{ConversionWebhooks: cleanupv1alpha1.ConversionKeep}, false},
		{"without OLM's provenance for this CSV", CRDScope{CRD: webhook}, disable, false},
		{"another live CSV owns it", CRDScope{CRD: webhook, Proven: true, Others: []OtherOwner{{}}}, disable, false},
		{"no webhook to turn off", CRDScope{CRD: none, Proven: true}, disable, false},
		{"no conversion at all", CRDScope{CRD: &apiextensionsv1.CustomResourceDefinition{}, Proven: true}, disable, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := MayDisableConversion(tt.scope, tt.settings); got != tt.want {
				t.Errorf("MayDisableConversion = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestConversionFate(t *testing.T) {
	webhook := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter}}}
	proven := CRDScope{Name: "widgets.example.com", CRD: webhook, Proven: true}
	disable := Settings{ConversionWebhooks: cleanupv1alpha1.ConversionDisable}
	for _, tt := range []struct {
		name        string
		scope       CRDScope
		settings    Settings
		unavailable bool
		want        bool
	}{
		{"the operator is gone: the conversion goes to None", proven, disable, true, true},
		{"the operator runs: its webhook may come back, the uninstall waits", proven, disable, false, false},
		{"conversionWebhooks: Keep blocks", proven, Settings{ConversionWebhooks: cleanupv1alpha1.ConversionKeep}, true, false},
		{"a CRD another live CSV owns is never changed", CRDScope{CRD: webhook, Proven: true, Others: []OtherOwner{{}}}, disable, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			it, ok := ConversionFate(tt.scope, tt.settings, tt.unavailable)
			if ok != tt.want {
				t.Fatalf("ConversionFate ok = %v, want %v", ok, tt.want)
			}
			if ok && (it.Action != ActionUpdate || it.Reason != UpdateConversionNone || it.Kind != CRDKind || it.Name != tt.scope.Name || it.Message == "") {
				t.Errorf("ConversionFate item = %+v, want Update %s of CRD %s with a message", it, UpdateConversionNone, tt.scope.Name)
			}
		})
	}
}

func TestStoredVersions(t *testing.T) {
	crd := func(stored []string, versions ...apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{
			Spec:   apiextensionsv1.CustomResourceDefinitionSpec{Versions: versions},
			Status: apiextensionsv1.CustomResourceDefinitionStatus{StoredVersions: stored},
		}
	}
	served := func(name string) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: true}
	}
	scope := func(c *apiextensionsv1.CustomResourceDefinition) CRDScope {
		return CRDScope{CRD: c, GVR: schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "widgets"}}
	}
	for _, tt := range []struct {
		name  string
		scope CRDScope
		want  []string
	}{
		{"an older stored version still served", scope(crd([]string{"v1", "v2"}, served("v1"), served("v2"))), []string{"v1"}},
		{"an older stored version no longer served", scope(crd([]string{"v1", "v2"}, apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1"}, served("v2"))), nil},
		{"only the listed version stored", scope(crd([]string{"v2"}, served("v1"), served("v2"))), nil},
		{"no CRD", CRDScope{}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := StoredVersions(tt.scope); !slices.Equal(got, tt.want) {
				t.Errorf("StoredVersions = %v, want %v", got, tt.want)
			}
		})
	}
}

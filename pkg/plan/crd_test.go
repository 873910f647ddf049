package plan

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

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

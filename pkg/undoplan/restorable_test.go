package undoplan

import (
	"reflect"
	"strings"
	"testing"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

var (
	widget = decide.Held{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: "a", Name: "db"}
	secret = decide.Held{Kind: "Secret", Resource: "secrets", Namespace: "a", Name: "db-password"}
	claim  = decide.Held{Kind: "PersistentVolumeClaim", Resource: "persistentvolumeclaims", Namespace: "a", Name: "db-data"}
	crd    = decide.Held{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Resource: "customresourcedefinitions", Name: "widgets.example.com"}
	role   = decide.Held{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Resource: "clusterroles", Name: "op"}
	hook   = decide.Held{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration", Resource: "validatingwebhookconfigurations", Name: "op"}
)

// TestRestorable: an undo restores what the uninstall destroyed but the
// old install's cluster RBAC and webhooks, CRDs first.
func TestRestorable(t *testing.T) {
	deleted, dependents := []decide.Held{widget, role, hook, crd}, []decide.Held{secret, claim, secret}
	if got, want := Restorable(deleted, dependents), []decide.Held{crd, widget, claim, secret}; !reflect.DeepEqual(got, want) {
		t.Errorf("restorable = %v, want %v", got, want)
	}
}

// TestCustomResources are the CRDs the operator must serve again.
func TestCustomResources(t *testing.T) {
	gadget := decide.Held{Group: "example.com", Kind: "Gadget", Resource: "gadgets", Namespace: "a", Name: "g"}
	if got, want := CustomResources([]decide.Held{widget, role, crd}, []decide.Held{secret, gadget, claim}), []string{"gadgets.example.com", "widgets.example.com"}; !reflect.DeepEqual(got, want) {
		t.Errorf("customResources = %v, want %v", got, want)
	}
}

// TestRestoreName: the same objects give the same Restore (an undo run
// again follows it), others another; a label value of at most 63.
func TestRestoreName(t *testing.T) {
	long := "csv-cleaner-" + strings.Repeat("x", 40) + "-0123456789-12"
	a := Name(long, []decide.Held{widget, secret}, 1)
	if len(a) > 63 || !strings.Contains(a, "-undo-") {
		t.Errorf("restoreName = %q (%d characters)", a, len(a))
	}
	if b := Name(long, []decide.Held{widget, secret}, 1); a != b {
		t.Errorf("restoreName of the same objects = %q, then %q", a, b)
	}
	if b := Name(long, []decide.Held{widget}, 1); a == b {
		t.Errorf("restoreName of other objects = %q, the same", b)
	}
}

// TestNotBack: what did not come back, and what came back wrong.
func TestNotBack(t *testing.T) {
	for _, tt := range []struct {
		row  Row
		want bool
	}{
		{Row{State: StateRestored}, false}, {Row{State: StatePresent}, false}, {Row{State: StateMissing}, true},
		{Row{State: StateUnread}, true}, {Row{State: StateRestored, Problem: "not bound to a volume"}, true},
	} {
		if got := tt.row.NotBack(); got != tt.want {
			t.Errorf("%+v: NotBack = %v, want %v", tt.row, got, tt.want)
		}
	}
}

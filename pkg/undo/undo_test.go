package undo

import (
	"reflect"
	"strings"
	"testing"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
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
// old install's cluster RBAC and webhooks, and its CRDs only without the
// operator, CRDs first.
func TestRestorable(t *testing.T) {
	d := &velero.Destroyed{Deleted: []decide.Held{widget, role, hook, crd}, Dependents: []decide.Held{secret, claim, secret}}
	if got, want := restorable(d, false), []decide.Held{widget, claim, secret}; !reflect.DeepEqual(got, want) {
		t.Errorf("restorable with the operator = %v, want %v", got, want)
	}
	if got, want := restorable(d, true), []decide.Held{crd, widget, claim, secret}; !reflect.DeepEqual(got, want) {
		t.Errorf("restorable without the operator = %v, want %v", got, want)
	}
}

// TestCustomResources are the CRDs the operator must serve again.
func TestCustomResources(t *testing.T) {
	gadget := decide.Held{Group: "example.com", Kind: "Gadget", Resource: "gadgets", Namespace: "a", Name: "g"}
	d := &velero.Destroyed{Deleted: []decide.Held{widget, role, crd}, Dependents: []decide.Held{secret, gadget, claim}}
	if got, want := customResources(d), []string{"gadgets.example.com", "widgets.example.com"}; !reflect.DeepEqual(got, want) {
		t.Errorf("customResources = %v, want %v", got, want)
	}
}

// TestRestoreName: the same objects give the same Restore (an undo run
// again follows it), others another; a label value of at most 63.
func TestRestoreName(t *testing.T) {
	long := "csv-cleaner-" + strings.Repeat("x", 40) + "-0123456789-12"
	a := restoreName(long, []decide.Held{widget, secret})
	if len(a) > 63 || !strings.Contains(a, "-undo-") {
		t.Errorf("restoreName = %q (%d characters)", a, len(a))
	}
	if b := restoreName(long, []decide.Held{widget, secret}); a != b {
		t.Errorf("restoreName of the same objects = %q, then %q", a, b)
	}
	if b := restoreName(long, []decide.Held{widget}); a == b {
		t.Errorf("restoreName of other objects = %q, the same", b)
	}
}

// TestMissing counts what did not come back, and what came back wrong.
func TestMissing(t *testing.T) {
	r := &Result{Rows: []Row{{State: StateRestored}, {State: StatePresent}, {State: StateMissing}, {State: StateRestored, Problem: "not bound to a volume"}}}
	if got := r.Missing(); got != 2 {
		t.Errorf("Missing = %d, want 2", got)
	}
}

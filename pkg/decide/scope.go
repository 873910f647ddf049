package decide

import (
	"fmt"
	"slices"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// OtherOwner is another live, non-copied CSV that owns the same CRD.
type OtherOwner struct {
	CSV types.NamespacedName
	// Targets it operates on; all namespaces when they cannot be known.
	Targets NamespaceSet
}

// ScopeInput is what ScopeCRDs looks at.
type ScopeInput struct {
	CSV   types.NamespacedName
	Owned []operatorsv1alpha1.CRDDescription
	// CRDs holds the owned CRDs that exist, by name.
	CRDs          map[string]*apiextensionsv1.CustomResourceDefinition
	CRDProvenance cleanupv1alpha1.Provenance
	// OtherOwners lists, by CRD name, the other live CSVs that own it.
	OtherOwners map[string][]OtherOwner
}

// CRDScope is the decision about one owned CRD: whether its instances are
// candidates for deletion, and how to list them.
type CRDScope struct {
	// Name is the owned CRD's name, <plural>.<group>.
	Name string
	// Kind is Kind.group, how records name its instances.
	Kind string
	// GVR lists the instances (a served version).
	GVR        schema.GroupVersionResource
	Namespaced bool
	// CRD is the live object; nil when it does not exist.
	CRD *apiextensionsv1.CustomResourceDefinition
	// Proven: the CRD carries OLM's provenance naming this CSV (or the check is waived).
	Proven bool
	// KeepReason is set when none of its instances are deleted.
	KeepReason string
	// Others are the other live CSVs owning the CRD.
	Others []OtherOwner
}

// ScopeCRDs decides, for each owned CRD, whether its instances may be
// deleted. It returns problems that block the uninstall: a malformed owned
// name or a CRD that is not established. It never widens what is deleted:
// a CRD without provenance is kept (unless waived), a cluster-scoped CRD
// another live CSV owns is kept, a CRD that is gone is noted.
func ScopeCRDs(in ScopeInput) ([]CRDScope, []Problem) {
	var scopes []CRDScope
	var problems []Problem
	seen := map[string]bool{}
	for _, owned := range in.Owned {
		if seen[owned.Name] {
			continue
		}
		seen[owned.Name] = true
		if msg := ValidOwnedName(owned.Name); msg != "" {
			problems = append(problems, Problem{Reason: cleanupv1alpha1.BlockedMalformedOwnedCRD, Object: "CustomResourceDefinition " + owned.Name,
				Message: fmt.Sprintf("spec.customresourcedefinitions.owned names %q, which is not a CRD name (%s); fix the CSV or remove the entry", owned.Name, msg)})
			continue
		}
		s := CRDScope{Name: owned.Name, Others: in.OtherOwners[owned.Name]}
		crd, ok := in.CRDs[owned.Name]
		if !ok {
			s.Kind = owned.Kind + "." + groupOf(owned.Name)
			s.KeepReason = cleanupv1alpha1.NoteCRDNotFound
			scopes = append(scopes, s)
			continue
		}
		s.CRD = crd
		s.Kind = crd.Spec.Names.Kind + "." + crd.Spec.Group
		s.Namespaced = crd.Spec.Scope == apiextensionsv1.NamespaceScoped
		if !Established(crd) {
			problems = append(problems, Problem{Reason: cleanupv1alpha1.BlockedCRDNotEstablished, Object: "CustomResourceDefinition " + crd.Name,
				Message: fmt.Sprintf("CRD %s is not established, so its instances cannot be listed; check its status conditions", crd.Name)})
			continue
		}
		version, ok := ServedVersion(crd)
		if !ok {
			problems = append(problems, Problem{Reason: cleanupv1alpha1.BlockedCRDNotEstablished, Object: "CustomResourceDefinition " + crd.Name,
				Message: fmt.Sprintf("CRD %s serves no version, so its instances cannot be listed", crd.Name)})
			continue
		}
		s.GVR = schema.GroupVersionResource{Group: crd.Spec.Group, Version: version, Resource: crd.Spec.Names.Plural}
		s.Proven = in.CRDProvenance == cleanupv1alpha1.ProvenanceWaived || slices.Contains(Provenance(crd.Annotations), in.CSV)
		switch {
		case !s.Proven:
			s.KeepReason = cleanupv1alpha1.KeepUnproven
		case !s.Namespaced && len(s.Others) > 0:
			s.KeepReason = cleanupv1alpha1.KeepSharedClusterScoped
		}
		scopes = append(scopes, s)
	}
	return scopes, problems
}

func ValidOwnedName(name string) string {
	plural, group, ok := strings.Cut(name, ".")
	if !ok || plural == "" || group == "" {
		return "it must be <plural>.<group>"
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return strings.Join(errs, "; ")
	}
	return ""
}

func groupOf(name string) string {
	_, group, _ := strings.Cut(name, ".")
	return group
}

func Established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// ServedVersion prefers the storage version and falls back to any served one.
func ServedVersion(crd *apiextensionsv1.CustomResourceDefinition) (string, bool) {
	fallback := ""
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		if v.Storage {
			return v.Name, true
		}
		if fallback == "" {
			fallback = v.Name
		}
	}
	return fallback, fallback != ""
}

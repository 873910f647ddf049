package olmv1

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// ExtensionScopeInput is what ScopeExtensionCRDs looks at.
type ExtensionScopeInput struct {
	Extension Extension
	// Sets are the extension's ClusterObjectSets (ControlledSets).
	Sets map[types.UID]bool
	// CRDs are every CRD of the cluster.
	CRDs []*apiextensionsv1.CustomResourceDefinition
}

// ScopeExtensionCRDs decides which CRDs an extension owns (OwnershipOf:
// what the garbage collector deletes with it, the owner labels agreeing),
// and for each how its instances are listed. OLM v1 lets a CRD belong to one
// extension only, so an owned CRD's instances are all the extension's: its
// scope is Proven and has no other owners. A CRD whose owner is in doubt,
// or that is not established, is a problem that blocks the uninstall.
func ScopeExtensionCRDs(in ExtensionScopeInput) ([]decide.CRDScope, []decide.Problem) {
	var scopes []decide.CRDScope
	var problems []decide.Problem
	for _, crd := range in.CRDs {
		owned, problem := OwnershipOf(crd, "CustomResourceDefinition", in.Extension, in.Sets)
		switch {
		case problem != nil:
			problems = append(problems, *problem)
			continue
		case owned == NotOwned:
			continue
		}
		s := decide.CRDScope{Name: crd.Name, Kind: crd.Spec.Names.Kind + "." + crd.Spec.Group, CRD: crd,
			Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped, Proven: true}
		version, ok := decide.ServedVersion(crd)
		if !decide.Established(crd) || !ok {
			problems = append(problems, decide.Problem{Reason: cleanupv1alpha1.BlockedCRDNotEstablished, Object: "CustomResourceDefinition " + crd.Name,
				Message: fmt.Sprintf("CRD %s is not Established or serves no version, so its instances cannot be listed; check its status conditions", crd.Name)})
			continue
		}
		s.GVR = schema.GroupVersionResource{Group: crd.Spec.Group, Version: version, Resource: crd.Spec.Names.Plural}
		scopes = append(scopes, s)
	}
	slices.SortFunc(scopes, func(a, b decide.CRDScope) int { return strings.Compare(a.Name, b.Name) })
	return scopes, problems
}

// ExtensionTargets are the namespaces whose instances of the extension's CRDs
// an uninstall deletes: every namespace with crds: Delete, else
// spec.config.inline's watchNamespace (every one when unset). A configuration
// that cannot be read blocks (docs/clusterextensions.md).
func ExtensionTargets(ext *ocv1.ClusterExtension, s decide.Settings) (decide.NamespaceSet, *decide.Problem) {
	if s.CRDs == cleanupv1alpha1.Delete || ext.Spec.Config == nil || ext.Spec.Config.Inline == nil {
		return decide.AllNamespaces(), nil
	}
	var config map[string]any
	if err := json.Unmarshal(ext.Spec.Config.Inline.Raw, &config); err != nil {
		return nil, targetsProblem(ext, fmt.Sprintf("spec.config.inline is not a JSON object: %v", err))
	}
	switch ns := config["watchNamespace"].(type) {
	case nil:
		return decide.AllNamespaces(), nil
	case string:
		if ns == "" {
			return decide.AllNamespaces(), nil
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, targetsProblem(ext, fmt.Sprintf("spec.config.inline.watchNamespace %q is no namespace name: %s", ns, strings.Join(errs, "; ")))
		}
		return decide.NewNamespaceSet([]string{ns}), nil
	default:
		return nil, targetsProblem(ext, fmt.Sprintf("spec.config.inline.watchNamespace is a %T, not a namespace name", ns))
	}
}

func targetsProblem(ext *ocv1.ClusterExtension, msg string) *decide.Problem {
	return &decide.Problem{Reason: cleanupv1alpha1.BlockedTargetNamespacesUnknown, Object: "ClusterExtension " + ext.Name,
		Message: msg + "; fix the ClusterExtension's configuration, or set crds: Delete (every namespace)"}
}

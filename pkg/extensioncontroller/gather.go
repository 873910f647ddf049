package extensioncontroller

import (
	"context"
	"fmt"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide/olmv1"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// +kubebuilder:rbac:groups=olm.operatorframework.io,resources=clusterobjectsets,verbs=list
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=list

// inputs are what the decisions of one pass read, live.
type inputs struct {
	ext  olmv1.Extension
	sets map[types.UID]bool
	// scopes are the CRDs the extension owns; problems block the uninstall.
	scopes   []decide.CRDScope
	problems []decide.Problem
	// crdKinds are the kinds (Kind.group) of every CRD of the cluster.
	crdKinds map[string]bool
}

// gather reads the extension's ClusterObjectSets (the Boxcutter applier's;
// none where the kind is not served) and every CRD, and decides which
// CRDs the extension owns (olmv1.ScopeExtensionCRDs).
func (r *Reconciler) gather(ctx context.Context, ext *ocv1.ClusterExtension) (inputs, error) {
	in := inputs{ext: olmv1.ExtensionOf(ext)}
	sets := &metav1.PartialObjectMetadataList{}
	sets.SetGroupVersionKind(ocv1.GroupVersion.WithKind(olmv1.ClusterObjectSetKind + "List"))
	var setProblems []decide.Problem
	switch err := r.APIReader.List(ctx, sets); {
	case meta.IsNoMatchError(err):
		in.sets = map[types.UID]bool{}
	case err != nil:
		return in, fmt.Errorf("listing ClusterObjectSets: %w", err)
	default:
		objs := make([]metav1.Object, len(sets.Items))
		for i := range sets.Items {
			objs[i] = &sets.Items[i]
		}
		in.sets, setProblems = olmv1.ControlledSets(in.ext, objs)
	}
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := r.APIReader.List(ctx, crds); err != nil {
		return in, fmt.Errorf("listing CRDs: %w", err)
	}
	all := make([]*apiextensionsv1.CustomResourceDefinition, len(crds.Items))
	in.crdKinds = make(map[string]bool, len(crds.Items))
	for i := range crds.Items {
		all[i] = &crds.Items[i]
		in.crdKinds[crds.Items[i].Spec.Names.Kind+"."+crds.Items[i].Spec.Group] = true
	}
	in.scopes, in.problems = olmv1.ScopeExtensionCRDs(olmv1.ExtensionScopeInput{Extension: in.ext, Sets: in.sets, CRDs: all})
	in.problems = append(setProblems, in.problems...)
	return in, nil
}

// operatorUnavailable returns a decide.Problem naming the first of the
// extension's Deployments (in its install namespace, owned by it) that is
// being deleted or not Available, read live; nil when they all run, or when
// there is none (then nothing is known, and nothing is claimed).
func (r *Reconciler) operatorUnavailable(ext *ocv1.ClusterExtension, sets map[types.UID]bool) func(context.Context) (*decide.Problem, error) {
	return func(ctx context.Context) (*decide.Problem, error) {
		deps := &appsv1.DeploymentList{}
		if err := r.APIReader.List(ctx, deps, client.InNamespace(ext.Spec.Namespace), client.MatchingLabels{
			olmv1.ExtensionOwnerKindLabel: ocv1.ClusterExtensionKind, olmv1.ExtensionOwnerNameLabel: ext.Name}); err != nil {
			return nil, fmt.Errorf("listing the operator's Deployments in %s: %w", ext.Spec.Namespace, err)
		}
		for i := range deps.Items {
			dep := &deps.Items[i]
			if owned, _ := olmv1.OwnershipOf(dep, "Deployment", olmv1.ExtensionOf(ext), sets); owned == olmv1.NotOwned {
				continue
			}
			if state := objects.Down(dep); state != "" {
				return decide.OperatorDown(client.ObjectKeyFromObject(dep).String(), state), nil
			}
		}
		return nil, nil
	}
}

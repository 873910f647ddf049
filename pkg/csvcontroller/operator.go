package csvcontroller

import (
	"context"
	"fmt"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get

// OperatorUnavailable returns a decide.Problem naming the first Deployment of the
// CSV's install strategy that is gone, being deleted or not Available, read
// live; nil when they all run, or when the CSV names none (then nothing is
// known, and nothing is claimed).
func (g gatherer) OperatorUnavailable(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion) (*decide.Problem, error) {
	for _, name := range DeploymentNames(csv) {
		key := client.ObjectKey{Namespace: csv.Namespace, Name: name}
		dep := &appsv1.Deployment{}
		err := g.Live.Get(ctx, key, dep)
		switch {
		case apierrors.IsNotFound(err):
			return decide.OperatorDown(key.String(), "is gone"), nil
		case err != nil:
			return nil, fmt.Errorf("getting the operator's Deployment %s: %w", key, err)
		}
		if state := objects.Down(dep); state != "" {
			return decide.OperatorDown(key.String(), state), nil
		}
	}
	return nil, nil
}

// DeploymentNames are the Deployments of the CSV's install strategy.
func DeploymentNames(csv *operatorsv1alpha1.ClusterServiceVersion) []string {
	var out []string
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if d.Name != "" {
			out = append(out, d.Name)
		}
	}
	return out
}

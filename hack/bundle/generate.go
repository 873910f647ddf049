package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

type options struct {
	version, out, dockerfile, pkg, channel, description, icon string
}

// inputs are the kustomized objects, sorted by what the bundle does with them.
type inputs struct {
	base        *operatorsv1alpha1.ClusterServiceVersion
	crds        []*unstructured.Unstructured
	deployments []appsv1.Deployment
	clusterRole map[string]rbacv1.ClusterRole
	// clusterRoleObj are the ClusterRoles as kustomize wrote them: one that
	// no binding gives csv-cleaner's ServiceAccount (metrics-reader, for
	// whoever scrapes it) ships in the bundle as it is.
	clusterRoleObj map[string]*unstructured.Unstructured
	role           map[string]rbacv1.Role
	bindings       []binding
	examples       []*unstructured.Unstructured
	extra          []*unstructured.Unstructured // objects the bundle ships as they are (Services, unbound ClusterRoles)
}

// binding is a ClusterRoleBinding or RoleBinding: which role a ServiceAccount gets.
type binding struct {
	cluster  bool
	roleKind string
	role     string
	subjects []rbacv1.Subject
}

func generate(r io.Reader, o options) error {
	v, err := semver.Parse(o.version)
	if err != nil {
		return fmt.Errorf("parsing --version %q: %w", o.version, err)
	}
	in, err := read(r)
	if err != nil {
		return err
	}
	in.extra = append(in.extra, unboundClusterRoles(in)...)
	csv, err := buildCSV(in, o, v)
	if err != nil {
		return err
	}
	return write(o, csv, in)
}

// read decodes the YAML stream and sorts the objects.
func read(r io.Reader) (*inputs, error) {
	in := &inputs{clusterRole: map[string]rbacv1.ClusterRole{}, clusterRoleObj: map[string]*unstructured.Unstructured{}, role: map[string]rbacv1.Role{}}
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("decoding the manifests: %w", err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := in.add(u); err != nil {
			return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	switch {
	case in.base == nil:
		return nil, errors.New("the manifests hold no ClusterServiceVersion base")
	case len(in.deployments) == 0:
		return nil, errors.New("the manifests hold no Deployment")
	}
	return in, nil
}

func (in *inputs) add(u *unstructured.Unstructured) error {
	gk := u.GroupVersionKind().GroupKind()
	switch gk.String() {
	case "ClusterServiceVersion.operators.coreos.com":
		in.base = &operatorsv1alpha1.ClusterServiceVersion{}
		return fromUnstructured(u, in.base)
	case "CustomResourceDefinition.apiextensions.k8s.io":
		in.crds = append(in.crds, u)
	case "Deployment.apps":
		d := appsv1.Deployment{}
		if err := fromUnstructured(u, &d); err != nil {
			return err
		}
		in.deployments = append(in.deployments, d)
	case "ClusterRole.rbac.authorization.k8s.io":
		cr := rbacv1.ClusterRole{}
		if err := fromUnstructured(u, &cr); err != nil {
			return err
		}
		in.clusterRole[cr.Name] = cr
		in.clusterRoleObj[cr.Name] = u
	case "Role.rbac.authorization.k8s.io":
		role := rbacv1.Role{}
		if err := fromUnstructured(u, &role); err != nil {
			return err
		}
		in.role[role.Name] = role
	case "ClusterRoleBinding.rbac.authorization.k8s.io":
		b := rbacv1.ClusterRoleBinding{}
		if err := fromUnstructured(u, &b); err != nil {
			return err
		}
		in.bindings = append(in.bindings, binding{cluster: true, roleKind: b.RoleRef.Kind, role: b.RoleRef.Name, subjects: b.Subjects})
	case "RoleBinding.rbac.authorization.k8s.io":
		b := rbacv1.RoleBinding{}
		if err := fromUnstructured(u, &b); err != nil {
			return err
		}
		in.bindings = append(in.bindings, binding{roleKind: b.RoleRef.Kind, role: b.RoleRef.Name, subjects: b.Subjects})
	case "Namespace", "ServiceAccount":
		// OLM creates the ServiceAccount from the CSV; the namespace is the user's choice.
	case "Service":
		in.extra = append(in.extra, u)
	default:
		if gk.Group == operatorsv1alpha1.SchemeGroupVersion.Group || !strings.HasSuffix(gk.Group, "csv-cleaner.io") {
			return fmt.Errorf("a registry+v1 bundle cannot carry %s", gk)
		}
		in.examples = append(in.examples, u)
	}
	return nil
}

// buildCSV fills the base CSV in.
func buildCSV(in *inputs, o options, v semver.Version) (*operatorsv1alpha1.ClusterServiceVersion, error) {
	csv := in.base.DeepCopy()
	csv.Name = fmt.Sprintf("%s.v%s", o.pkg, v)
	csv.Namespace = ""
	csv.Spec.Version = version.OperatorVersion{Version: v}

	desc, err := os.ReadFile(o.description)
	if err != nil {
		return nil, fmt.Errorf("reading the description: %w", err)
	}
	csv.Spec.Description = string(desc)
	icon, err := os.ReadFile(o.icon)
	if err != nil {
		return nil, fmt.Errorf("reading the icon: %w", err)
	}
	csv.Spec.Icon = []operatorsv1alpha1.Icon{{Data: base64.StdEncoding.EncodeToString(icon), MediaType: "image/svg+xml"}}

	examples := make([]map[string]any, 0, len(in.examples))
	for _, e := range in.examples {
		obj := e.DeepCopy()
		unstructured.RemoveNestedField(obj.Object, "metadata", "namespace")
		examples = append(examples, obj.Object)
	}
	almExamples, err := json.MarshalIndent(examples, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding alm-examples: %w", err)
	}
	if csv.Annotations == nil {
		csv.Annotations = map[string]string{}
	}
	csv.Annotations["alm-examples"] = string(almExamples)

	strategy := operatorsv1alpha1.StrategyDetailsDeployment{}
	csv.Spec.RelatedImages = nil
	for _, d := range in.deployments {
		strategy.DeploymentSpecs = append(strategy.DeploymentSpecs, operatorsv1alpha1.StrategyDeploymentSpec{
			Name: d.Name, Label: d.Labels, Spec: d.Spec,
		})
		for _, c := range d.Spec.Template.Spec.Containers {
			csv.Annotations["containerImage"] = c.Image
			csv.Spec.RelatedImages = append(csv.Spec.RelatedImages, operatorsv1alpha1.RelatedImage{Name: c.Name, Image: c.Image})
		}
	}
	if strategy.Permissions, strategy.ClusterPermissions, err = permissions(in); err != nil {
		return nil, err
	}
	csv.Spec.InstallStrategy = operatorsv1alpha1.NamedInstallStrategy{
		StrategyName: operatorsv1alpha1.InstallStrategyNameDeployment, StrategySpec: strategy,
	}
	return csv, nil
}

// unboundClusterRoles are the ClusterRoles no binding in the manifests
// refers to, in name order: roles for others to bind (metrics-reader), which
// the bundle ships as objects of their own rather than as permissions.
func unboundClusterRoles(in *inputs) []*unstructured.Unstructured {
	bound := map[string]bool{}
	for _, b := range in.bindings {
		if b.roleKind == "ClusterRole" {
			bound[b.role] = true
		}
	}
	var out []*unstructured.Unstructured
	for _, name := range slices.Sorted(maps.Keys(in.clusterRoleObj)) {
		if !bound[name] {
			out = append(out, in.clusterRoleObj[name])
		}
	}
	return out
}

// permissions turns each binding of a role to a ServiceAccount into the
// CSV's permissions (Roles) and clusterPermissions (ClusterRoles).
func permissions(in *inputs) (ns, cluster []operatorsv1alpha1.StrategyDeploymentPermissions, err error) {
	for _, b := range in.bindings {
		for _, s := range b.subjects {
			if s.Kind != rbacv1.ServiceAccountKind {
				return nil, nil, fmt.Errorf("binding to %s %s: only ServiceAccounts can be bound in a bundle, not %s %s", b.roleKind, b.role, s.Kind, s.Name)
			}
			switch {
			case b.roleKind == "ClusterRole" && b.cluster:
				cr, ok := in.clusterRole[b.role]
				if !ok {
					return nil, nil, fmt.Errorf("ClusterRoleBinding to ClusterRole %s, which the manifests do not define", b.role)
				}
				cluster = append(cluster, operatorsv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: s.Name, Rules: cr.Rules})
			case b.roleKind == "Role" && !b.cluster:
				role, ok := in.role[b.role]
				if !ok {
					return nil, nil, fmt.Errorf("RoleBinding to Role %s, which the manifests do not define", b.role)
				}
				ns = append(ns, operatorsv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: s.Name, Rules: role.Rules})
			default:
				return nil, nil, fmt.Errorf("a binding of a %s to %s cannot be expressed in a CSV", b.roleKind, b.role)
			}
		}
	}
	return ns, cluster, nil
}

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true); err != nil {
		return fmt.Errorf("decoding: %w", err)
	}
	return nil
}

package decide

import (
	"fmt"
	"maps"

	"slices"
	"strings"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// NamespaceSet is a set of target namespaces; AllNamespaces() stands for
// every namespace.
type NamespaceSet map[string]struct{}

// AllNamespaces is the set of every namespace.
func AllNamespaces() NamespaceSet { return NamespaceSet{"": {}} }

// NewNamespaceSet builds a set from OLM's target namespace list. Only
// exactly [""] is every namespace: a "" beside names covers nothing more
// than the names (see DecideTargets, which refuses such a list).
func NewNamespaceSet(targets []string) NamespaceSet {
	s := NamespaceSet{}
	for _, t := range targets {
		s[t] = struct{}{}
	}
	return s
}

// All reports whether the set covers every namespace: exactly [""].
func (s NamespaceSet) All() bool {
	_, ok := s[""]
	return ok && len(s) == 1
}

// Has reports whether the set covers the namespace.
func (s NamespaceSet) Has(ns string) bool {
	if s.All() {
		return true
	}
	_, ok := s[ns]
	return ok && ns != ""
}

// TargetsInput is what OLM says about a CSV's target namespaces.
type TargetsInput struct {
	CSV types.NamespacedName
	// OperatorGroup is the name the CSV's olm.operatorGroup annotation gives.
	OperatorGroup string
	// Status is the OperatorGroup's status.namespaces: nil when it is gone or has none.
	Status []string
	// Annotation is the CSV's olm.targetNamespaces annotation, if HasAnnotation.
	Annotation    string
	HasAnnotation bool
}

// DecideTargets decides the namespaces an uninstall may delete operands in
// from the OperatorGroup's status.namespaces and the CSV's annotation:
// malformed input is a Problem that quotes it, never a wider set
// (docs/safety.md lists the cases).
func DecideTargets(in TargetsInput) (NamespaceSet, *Problem) {
	problem := func(format string, args ...any) *Problem {
		return &Problem{Reason: cleanupv1alpha1.BlockedTargetNamespacesUnknown, Object: "ClusterServiceVersion " + in.CSV.String(),
			Message: fmt.Sprintf("the target namespaces of CSV %s cannot be known: ", in.CSV) + fmt.Sprintf(format, args...) +
				"; nothing is deleted until OLM's OperatorGroup status and the CSV's " + operatorsv1.OperatorGroupTargetsAnnotationKey + " annotation name them without doubt"}
	}
	var status, annotation NamespaceSet
	if len(in.Status) > 0 {
		set, err := parseStatusNamespaces(in.Status)
		if err != nil {
			return nil, problem("OperatorGroup %s/%s has status.namespaces %q, %v", in.CSV.Namespace, in.OperatorGroup, in.Status, err)
		}
		status = set
	}
	if in.HasAnnotation {
		set, err := ParseTargets(in.Annotation)
		if err != nil {
			return nil, problem("the CSV's %s annotation is %q, %v", operatorsv1.OperatorGroupTargetsAnnotationKey, in.Annotation, err)
		}
		annotation = set
	}
	switch {
	case status == nil && annotation == nil && in.OperatorGroup == "":
		return nil, problem("the CSV names no OperatorGroup (annotation %s) and has no %s annotation; annotate the CSV",
			operatorsv1.OperatorGroupAnnotationKey, operatorsv1.OperatorGroupTargetsAnnotationKey)
	case status == nil && annotation == nil:
		return nil, problem("its OperatorGroup %q has no status.namespaces and the CSV has no %s annotation; restore the OperatorGroup or annotate the CSV",
			in.OperatorGroup, operatorsv1.OperatorGroupTargetsAnnotationKey)
	case annotation == nil:
		return status, nil
	case status == nil:
		return annotation, nil
	case status.All() && annotation.All():
		return status, nil
	case status.All() != annotation.All():
		return nil, problem("OperatorGroup %s/%s has status.namespaces %q but the CSV's %s annotation is %q: one says every namespace, the other names namespaces",
			in.CSV.Namespace, in.OperatorGroup, in.Status, operatorsv1.OperatorGroupTargetsAnnotationKey, in.Annotation)
	}
	both := NamespaceSet{}
	for ns := range status {
		if annotation.Has(ns) {
			both[ns] = struct{}{}
		}
	}
	if len(both) == 0 {
		return nil, problem("OperatorGroup %s/%s has status.namespaces %q but the CSV's %s annotation is %q: they name no namespace in common",
			in.CSV.Namespace, in.OperatorGroup, in.Status, operatorsv1.OperatorGroupTargetsAnnotationKey, in.Annotation)
	}
	return both, nil
}

// parseStatusNamespaces reads an OperatorGroup's status.namespaces.
func parseStatusNamespaces(list []string) (NamespaceSet, error) {
	if len(list) == 1 && list[0] == "" {
		return AllNamespaces(), nil
	}
	if slices.Contains(list, "") {
		return nil, fmt.Errorf(`which has "" (every namespace) beside namespace names`)
	}
	for _, ns := range list {
		if err := validNamespaceName(ns); err != nil {
			return nil, err
		}
	}
	return NewNamespaceSet(list), nil
}

// ParseTargets reads the olm.targetNamespaces annotation: exactly "" means
// every namespace, else a comma-separated list of namespace names (spaces
// around a name are ignored). A blank name, or "" beside names, is an error.
func ParseTargets(v string) (NamespaceSet, error) {
	if v == "" {
		return AllNamespaces(), nil
	}
	var names []string
	for _, ns := range strings.Split(v, ",") {
		ns = strings.TrimSpace(ns)
		if ns == "" {
			return nil, fmt.Errorf(`which has a blank name (only "" exactly means every namespace)`)
		}
		if err := validNamespaceName(ns); err != nil {
			return nil, err
		}
		names = append(names, ns)
	}
	return NewNamespaceSet(names), nil
}

func validNamespaceName(ns string) error {
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("whose %q is no namespace name: %s", ns, strings.Join(errs, "; "))
	}
	return nil
}

// OperatorGroupView is what DecideOperatorGroups reads of one OperatorGroup
// in the CSV's namespace.
type OperatorGroupView struct {
	Name string
	// Status is status.namespaces.
	Status []string
	// Expected is what OLM writes into status.namespaces from the spec
	// (getOperatorGroupTargets): spec.targetNamespaces, else the namespaces
	// spec.selector matches, else [""] (every namespace).
	Expected []string
}

// DecideOperatorGroups blocks an uninstall whose target namespaces OLM
// itself cannot tell: several OperatorGroups in the CSV's namespace, or one
// whose status.namespaces differs from its spec as sets (OLM has not caught
// up).
func DecideOperatorGroups(csv types.NamespacedName, groups []OperatorGroupView) *Problem {
	object := "ClusterServiceVersion " + csv.String()
	if len(groups) > 1 {
		names := make([]string, 0, len(groups))
		for _, g := range groups {
			names = append(names, g.Name)
		}
		slices.Sort(names)
		return &Problem{Reason: cleanupv1alpha1.BlockedTooManyOperatorGroups, Object: object,
			Message: fmt.Sprintf("namespace %s holds %d OperatorGroups (%s): OLM cannot tell the CSV's target namespaces, so neither can csv-cleaner; nothing is deleted until one remains",
				csv.Namespace, len(groups), strings.Join(names, ", "))}
	}
	if len(groups) == 0 || len(groups[0].Status) == 0 {
		return nil
	}
	g := groups[0]
	status, err := parseStatusNamespaces(g.Status)
	if err != nil {
		return nil
	}
	expected := NewNamespaceSet(g.Expected)
	if !maps.Equal(status, expected) {
		return &Problem{Reason: cleanupv1alpha1.BlockedOperatorGroupOutOfSync, Object: object,
			Message: fmt.Sprintf("OperatorGroup %s/%s has status.namespaces %q but its spec names %q: OLM has not caught up with a change of its targets; nothing is deleted until it has",
				csv.Namespace, g.Name, g.Status, g.Expected)}
	}
	return nil
}

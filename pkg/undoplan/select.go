package undoplan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// UndoSelection is the part of an uninstall an undo brings back: the custom
// resources it deleted that Only names or Selector matches, with what they
// own. An empty UndoSelection is everything.
type UndoSelection struct {
	// Only are custom resources by kind (Kind, Kind.group or plural.group),
	// namespace and name.
	Only []ObjectName
	// Selector matches custom resources by their labels as they were.
	Selector labels.Selector
}

// ObjectName names one object: KIND/NAMESPACE/NAME, or KIND/NAME for a
// cluster-scoped one.
type ObjectName struct {
	Kind, Namespace, Name string
}

// ParseObjectName reads KIND/NAMESPACE/NAME, or KIND/NAME.
func ParseObjectName(s string) (ObjectName, error) {
	parts := strings.Split(s, "/")
	switch {
	case len(parts) == 3 && parts[0] != "" && parts[1] != "" && parts[2] != "":
		return ObjectName{Kind: parts[0], Namespace: parts[1], Name: parts[2]}, nil
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return ObjectName{Kind: parts[0], Name: parts[1]}, nil
	}
	return ObjectName{}, fmt.Errorf("%q is not KIND/NAMESPACE/NAME (or KIND/NAME for a cluster-scoped object)", s)
}

// String is KIND/NAMESPACE/NAME.
func (o ObjectName) String() string {
	if o.Namespace == "" {
		return o.Kind + "/" + o.Name
	}
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}

// names reports whether o names h: by kind (Kind, Kind.group or
// plural.group, any case), namespace and name.
func (o ObjectName) names(h decide.Held) bool {
	kind := strings.ToLower(o.Kind)
	return o.Namespace == h.Namespace && o.Name == h.Name &&
		(kind == strings.ToLower(h.Kind) || kind == strings.ToLower(h.KindName()) || kind == strings.ToLower(h.Kind+"."+h.Group) || kind == h.ResourceOf())
}

// Empty reports whether the selection is everything.
func (s UndoSelection) Empty() bool { return len(s.Only) == 0 && s.Selector == nil }

// SelectInput is what Select reads.
type SelectInput struct {
	Selection UndoSelection
	// Restorable are what the undo would restore of the whole uninstall.
	Restorable []decide.Held
	// Deleted are the objects the uninstall deleted; Origins, what it
	// destroyed as it was.
	Deleted []decide.Held
	Origins []decide.Origin
}

// Select narrows what an undo restores to the selected custom resources
// the uninstall deleted and what they own, transitively, by the
// ownerReferences they had (an object any of whose owners is selected
// comes back with it), and the CRDs of the selected kinds; unmatched names
// are an error, so that a typo restores nothing. The order is Restorable's.
func Select(in SelectInput) ([]decide.Held, error) {
	if in.Selection.Empty() {
		return in.Restorable, nil
	}
	origin := make(map[decide.Held]decide.Origin, len(in.Origins))
	for _, o := range in.Origins {
		origin[o.Object] = o
	}
	selected := map[types.UID]bool{}
	picked := map[decide.Held]bool{}
	kinds := map[string]bool{}
	matched := make([]bool, len(in.Selection.Only))
	for _, h := range in.Deleted {
		if h.Kind == "CustomResourceDefinition" || decide.BuiltInGroup(h.Group) {
			continue // the custom resources only
		}
		pick := in.Selection.Selector != nil && in.Selection.Selector.Matches(labels.Set(origin[h].Labels))
		for i, o := range in.Selection.Only {
			if o.names(h) {
				pick, matched[i] = true, true
			}
		}
		if pick {
			picked[h], selected[origin[h].UID] = true, true
			kinds[h.Resource+"."+h.Group] = true
		}
	}
	var unmatched []string
	for i, ok := range matched {
		if !ok {
			unmatched = append(unmatched, in.Selection.Only[i].String())
		}
	}
	if len(unmatched) > 0 {
		return nil, fmt.Errorf("the uninstall deleted no custom resource %s", strings.Join(unmatched, ", "))
	}
	if len(picked) == 0 {
		return nil, fmt.Errorf("no custom resource the uninstall deleted had labels matching %s", in.Selection.Selector)
	}
	// What the picked own, transitively.
	for grew := true; grew; {
		grew = false
		for _, o := range in.Origins {
			if picked[o.Object] {
				continue
			}
			if slices.ContainsFunc(o.Owners, func(r metav1.OwnerReference) bool { return selected[r.UID] }) {
				picked[o.Object], selected[o.UID], grew = true, true, true
			}
		}
	}
	var out []decide.Held
	for _, h := range in.Restorable {
		if picked[h] || h.Kind == "CustomResourceDefinition" && kinds[h.Name] {
			out = append(out, h)
		}
	}
	return out, nil
}

package velero

import (
	"fmt"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// maxPolicy bounds a resource policy's YAML: a ConfigMap holds at most 1 MiB.
const maxPolicy = 1000 << 10

// policy is Velero's resource policy (a ConfigMap's one key, read by a
// Backup's or a Restore's spec.resourcePolicy): its fine-grained filters
// name, per namespace and per kind, the objects taken (Velero v1.18).
type policy struct {
	Version              string               `json:"version"`
	IncludeExcludePolicy *includeExclude      `json:"includeExcludePolicy,omitempty"`
	Namespaced           []namespacedFilter   `json:"namespacedFilterPolicies,omitempty"`
	ClusterScoped        *clusterScopedFilter `json:"clusterScopedFilterPolicy,omitempty"`
}

type includeExclude struct {
	IncludedClusterScopedResources   []string `json:"includedClusterScopedResources"`
	ExcludedClusterScopedResources   []string `json:"excludedClusterScopedResources"`
	IncludedNamespaceScopedResources []string `json:"includedNamespaceScopedResources"`
	ExcludedNamespaceScopedResources []string `json:"excludedNamespaceScopedResources"`
}

type namespacedFilter struct {
	Namespaces      []string         `json:"namespaces"`
	ResourceFilters []resourceFilter `json:"resourceFilters"`
}

type clusterScopedFilter struct {
	ResourceFilters []resourceFilter `json:"resourceFilters"`
}

// resourceFilter takes the objects of kinds named names (every one of them
// when names is empty).
type resourceFilter struct {
	Kinds []string `json:"kinds"`
	Names []string `json:"names,omitempty"`
}

// persistentVolumes is the resource a Backup leaves out unless it names one.
const persistentVolumes = "persistentvolumes"

// BackupPolicy is the resource policy of a Backup of content, held by the
// ConfigMap name in Velero's namespace: in each namespace the whole kinds
// and the objects named, cluster-wide the named cluster-scoped objects (the
// whole cluster-scoped kinds are not refined). PersistentVolumes are left
// out unless content names one: Velero takes each claim's PV as an item of
// its claim, and v1.18.3 records it in a map without a lock from every
// item-block worker (fatal error: concurrent map writes, docs/backup.md);
// its CSI restore makes a claim's volume from the claim's VolumeSnapshot
// and needs no PV object. It returns the YAML of the
// ConfigMap's one key and the Backup's includedNamespaces, or an error
// when the policy does not fit in a ConfigMap.
func BackupPolicy(c decide.BackupContent, namespace, name string) (string, []string, error) {
	ie := &includeExclude{}
	p := policy{Version: "v1", IncludeExcludePolicy: ie}
	add := func(list *[]string, r string) {
		if !slices.Contains(*list, r) {
			*list = append(*list, r)
		}
	}
	var wholeNamespaced []string
	for _, w := range c.Whole {
		if w.Namespaced {
			add(&ie.IncludedNamespaceScopedResources, w.Resource)
			wholeNamespaced = append(wholeNamespaced, w.Resource)
		} else {
			add(&ie.IncludedClusterScopedResources, w.Resource)
		}
	}
	named := map[string]map[string][]string{} // namespace, resource: names
	cluster := map[string][]string{}
	for _, h := range c.Named {
		r := h.ResourceOf()
		if h.Namespace == "" {
			add(&ie.IncludedClusterScopedResources, r)
			cluster[r] = append(cluster[r], h.Name)
			continue
		}
		add(&ie.IncludedNamespaceScopedResources, r)
		if named[h.Namespace] == nil {
			named[h.Namespace] = map[string][]string{}
		}
		named[h.Namespace][r] = append(named[h.Namespace][r], h.Name)
	}
	namespaces, namespacesIn, err := decide.PolicyNamespaces(c)
	if err != nil {
		return "", nil, err
	}
	every := slices.Contains(c.WholeIn, decide.EveryNamespace)
	for _, ns := range namespaces {
		entry := namespacedFilter{Namespaces: []string{ns}}
		if every || slices.Contains(c.WholeIn, ns) {
			for _, r := range wholeNamespaced {
				entry.ResourceFilters = append(entry.ResourceFilters, resourceFilter{Kinds: []string{r}})
			}
		}
		for _, r := range sortedKeys(named[ns]) {
			if !slices.ContainsFunc(entry.ResourceFilters, func(f resourceFilter) bool { return f.Kinds[0] == r }) {
				entry.ResourceFilters = append(entry.ResourceFilters, resourceFilter{Kinds: []string{r}, Names: named[ns][r]})
			}
		}
		if len(entry.ResourceFilters) > 0 {
			p.Namespaced = append(p.Namespaced, entry)
		}
	}
	if len(cluster) > 0 {
		p.ClusterScoped = &clusterScopedFilter{}
		for _, r := range sortedKeys(cluster) {
			p.ClusterScoped.ResourceFilters = append(p.ClusterScoped.ResourceFilters, resourceFilter{Kinds: []string{r}, Names: cluster[r]})
		}
	}
	slices.Sort(ie.IncludedClusterScopedResources)
	slices.Sort(ie.IncludedNamespaceScopedResources)
	if len(cluster[persistentVolumes]) == 0 {
		ie.ExcludedClusterScopedResources = []string{persistentVolumes}
	}
	if len(ie.IncludedNamespaceScopedResources) == 0 {
		onlyItself(&p, namespace, name)
		namespacesIn = []string{namespace}
	}
	y, err := marshalPolicy(p)
	return y, namespacesIn, err
}

// onlyItself narrows a policy with no namespaced content, whose empty list
// of namespaced resources Velero would read as every one, to the one
// ConfigMap that holds it, in Velero's namespace (includedNamespaces then
// names that namespace alone).
func onlyItself(p *policy, namespace, name string) {
	p.IncludeExcludePolicy.IncludedNamespaceScopedResources = []string{"configmaps"}
	p.Namespaced = []namespacedFilter{{Namespaces: []string{namespace}, ResourceFilters: []resourceFilter{{Kinds: []string{"configmaps"}, Names: []string{name}}}}}
}

// RestorePolicy is the resource policy of a Restore of exactly objects:
// every namespaced one by name in its namespace, every cluster-scoped one
// by name. Kinds absent from it are restored as the Restore's other
// filters say: the undo excludes them.
func RestorePolicy(objects []decide.Held) (string, error) {
	p := policy{Version: "v1"}
	byNamespace := map[string]map[string][]string{}
	cluster := map[string][]string{}
	for _, h := range objects {
		r := h.ResourceOf()
		if h.Namespace == "" {
			cluster[r] = append(cluster[r], h.Name)
			continue
		}
		if byNamespace[h.Namespace] == nil {
			byNamespace[h.Namespace] = map[string][]string{}
		}
		byNamespace[h.Namespace][r] = append(byNamespace[h.Namespace][r], h.Name)
	}
	for _, ns := range sortedKeys(byNamespace) {
		entry := namespacedFilter{Namespaces: []string{ns}}
		for _, r := range sortedKeys(byNamespace[ns]) {
			entry.ResourceFilters = append(entry.ResourceFilters, resourceFilter{Kinds: []string{r}, Names: byNamespace[ns][r]})
		}
		p.Namespaced = append(p.Namespaced, entry)
	}
	if len(cluster) > 0 {
		p.ClusterScoped = &clusterScopedFilter{}
		for _, r := range sortedKeys(cluster) {
			p.ClusterScoped.ResourceFilters = append(p.ClusterScoped.ResourceFilters, resourceFilter{Kinds: []string{r}, Names: cluster[r]})
		}
	}
	return marshalPolicy(p)
}

func marshalPolicy(p policy) (string, error) {
	b, err := yaml.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("writing Velero's resource policy: %w", err)
	}
	if len(b) > maxPolicy {
		return "", fmt.Errorf("the resource policy of Velero naming these objects takes %d bytes, more than a ConfigMap holds (%d)", len(b), maxPolicy)
	}
	return string(b), nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

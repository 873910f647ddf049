package decide

import (
	"encoding/json"
	"fmt"
	"slices"
)

// ConsolePlugins reads a CSV's console.openshift.io/plugins annotation as
// the OpenShift console reads it: a JSON list of ConsolePlugin names. An
// empty annotation names none; anything else that is not a list of
// non-empty names is an error, and names none (malformed input never
// widens what is disabled).
func ConsolePlugins(annotation string) ([]string, error) {
	if annotation == "" {
		return nil, nil
	}
	var names []string
	if err := json.Unmarshal([]byte(annotation), &names); err != nil {
		return nil, fmt.Errorf("console.openshift.io/plugins is not a JSON list of names: %w", err)
	}
	if slices.Contains(names, "") {
		return nil, fmt.Errorf("console.openshift.io/plugins %s names an empty plugin", annotation)
	}
	return names, nil
}

// PluginsToDisable is what the console's enabled plugins become once an
// uninstalled CSV's plugins (ours) are taken out, as the console's own
// uninstall does: a plugin that another CSV still names (others) stays
// enabled. It returns the list and the plugins taken out; nil, nil when
// nothing changes.
func PluginsToDisable(enabled, ours []string, others map[string]bool) (kept, removed []string) {
	for _, p := range enabled {
		if slices.Contains(ours, p) && !others[p] {
			removed = append(removed, p)
			continue
		}
		kept = append(kept, p)
	}
	if len(removed) == 0 {
		return nil, nil
	}
	if kept == nil {
		kept = []string{}
	}
	return kept, removed
}

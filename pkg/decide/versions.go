package decide

import (
	"strings"
)

// BackedUpVersions are the versions a Backup holds each kind at (Kind.group,
// the Kind alone for the core group), read from its resource list, whose
// keys are group/version/Kind (version/Kind for the core group).
func BackedUpVersions(list map[string][]string) map[string]string {
	out := map[string]string{}
	for key := range list {
		parts := strings.Split(key, "/")
		switch len(parts) {
		case 2:
			out[parts[1]] = parts[0]
		case 3:
			out[parts[2]+"."+parts[0]] = parts[1]
		}
	}
	return out
}

// KindKey is a Held's kind as BackedUpVersions keys it.
func (d Held) KindKey() string {
	if d.Group == "" {
		return d.Kind
	}
	return d.Kind + "." + d.Group
}

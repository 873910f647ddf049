package dryrun

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// PluralOf names a kind's resource, as the API server serves it (mapper's).
func PluralOf(mapper meta.RESTMapper) func(group, kind string) (string, error) {
	return func(group, kind string) (string, error) {
		m, err := mapper.RESTMapping(schema.GroupKind{Group: group, Kind: kind})
		if err != nil {
			return "", err
		}
		return m.Resource.Resource, nil
	}
}

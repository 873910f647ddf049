package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// ServeBundleDir serves a package from folders as they are in this
// repository (bundle/ and catalog-olmv1/<package>/): the bundle folder
// becomes a bundle image, labelled with its metadata/annotations.yaml, and
// the file-based catalog a catalog image in which the bundle named
// bundleName points at it instead of the image the catalog names (which
// must name one: OLM v1 reads no manifests from a catalog). It creates a
// ClusterCatalog called name and waits until catalogd serves it.
func (o *OLMv1) ServeBundleDir(ctx context.Context, name, bundleDir, catalogDir, bundleName string) (*ocv1.ClusterCatalog, error) {
	files, err := readTree(bundleDir)
	if err != nil {
		return nil, err
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(files["metadata/annotations.yaml"], &meta); err != nil {
		return nil, fmt.Errorf("reading %s/metadata/annotations.yaml: %w", bundleDir, err)
	}
	ref, err := o.Registry.Push(ctx, "bundles/"+name, "latest", files, meta.Annotations)
	if err != nil {
		return nil, err
	}
	fbc, err := readTree(catalogDir)
	if err != nil {
		return nil, err
	}
	catalog := map[string][]byte{}
	for path, data := range fbc {
		out, err := pointBundle(data, bundleName, ref)
		if err != nil {
			return nil, fmt.Errorf("reading %s/%s: %w", catalogDir, path, err)
		}
		catalog[filepath.Join("configs", name, strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))+".json")] = out
	}
	return o.serve(ctx, name, catalog, map[string]string{fixtures.CatalogConfigDirLabel: "/configs"})
}

// pointBundle re-encodes a file-based catalog's YAML documents as JSON
// lines, with the image of bundle bundleName, which must have one, set to ref.
func pointBundle(data []byte, bundleName, ref string) ([]byte, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []byte
	for {
		var blob map[string]any
		if err := dec.Decode(&blob); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		if blob == nil {
			continue
		}
		if blob["schema"] == "olm.bundle" && blob["name"] == bundleName {
			if image, _ := blob["image"].(string); image == "" {
				return nil, fmt.Errorf("bundle %s names no image: OLM v1 could not pull it", bundleName)
			}
			blob["image"] = ref
		}
		line, err := json.Marshal(blob)
		if err != nil {
			return nil, err
		}
		out = append(append(out, line...), '\n')
	}
}

// readTree reads every file under dir, keyed by its path relative to dir.
func readTree(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)], err = os.ReadFile(path)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	return files, nil
}

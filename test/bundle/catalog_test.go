package bundle_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
)

// meta is one object of a file-based catalog, as `opm render` streams it.
type meta struct {
	Schema         string  `json:"schema"`
	Name           string  `json:"name"`
	Package        string  `json:"package"`
	DefaultChannel string  `json:"defaultChannel"`
	Image          *string `json:"image"` // nil when absent
	Entries        []struct {
		Name string `json:"name"`
	} `json:"entries"`
	Properties []struct {
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	} `json:"properties"`
}

// TestCatalog validates catalog/ with opm and checks that it offers
// bundle/'s CSV in channel stable of package csv-cleaner, embedded so that
// OLM pulls no bundle image.
func TestCatalog(t *testing.T) {
	root := controlplane.RepoRoot()
	opm := validatedCatalog(t, root, "catalog")
	out, err := exec.Command(opm, "render", filepath.Join(root, "catalog"), "--output=json").Output()
	if err != nil {
		t.Fatalf("opm render catalog: %v", err)
	}
	var pkgs, channels, bundles []meta
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var m meta
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding opm's output: %v", err)
		}
		switch m.Schema {
		case "olm.package":
			pkgs = append(pkgs, m)
		case "olm.channel":
			channels = append(channels, m)
		case "olm.bundle":
			bundles = append(bundles, m)
		}
	}

	shipped := readYAML(t, filepath.Join(root, "bundle", "manifests", "csv-cleaner.clusterserviceversion.yaml"))
	name := shipped["metadata"].(map[string]any)["name"].(string)

	if len(pkgs) != 1 || pkgs[0].Name != "csv-cleaner" || pkgs[0].DefaultChannel != "stable" {
		t.Errorf("packages = %+v, want only csv-cleaner with default channel stable", pkgs)
	}
	if len(channels) != 1 || channels[0].Name != "stable" || len(channels[0].Entries) != 1 || channels[0].Entries[0].Name != name {
		t.Errorf("channels = %+v, want only stable, with the entry %s", channels, name)
	}
	if len(bundles) != 1 || bundles[0].Name != name {
		t.Fatalf("bundles = %d, want only %s", len(bundles), name)
	}
	b := bundles[0]
	if b.Image == nil || *b.Image != "" {
		t.Errorf("bundle image = %v, want \"\": with an image OLM unpacks it instead of reading the embedded manifests", b.Image)
	}
	var embedded []map[string]any
	for _, p := range b.Properties {
		if p.Type != "olm.bundle.object" {
			continue
		}
		var v struct {
			Data string `json:"data"`
		}
		if err := json.Unmarshal(p.Value, &v); err != nil {
			t.Fatalf("decoding an olm.bundle.object: %v", err)
		}
		raw, err := base64.StdEncoding.DecodeString(v.Data)
		if err != nil {
			t.Fatalf("decoding an olm.bundle.object: %v", err)
		}
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatalf("decoding an olm.bundle.object: %v", err)
		}
		embedded = append(embedded, obj)
	}
	files, _ := filepath.Glob(filepath.Join(root, "bundle", "manifests", "*.yaml"))
	if len(embedded) != len(files) {
		t.Errorf("the catalog embeds %d objects, bundle/manifests has %d: run `make catalog`", len(embedded), len(files))
	}
	found := false
	for _, obj := range embedded {
		if obj["kind"] == "ClusterServiceVersion" {
			found = true
			if !reflect.DeepEqual(obj, shipped) {
				t.Errorf("the catalog's CSV differs from bundle/'s: run `make catalog`")
			}
		}
	}
	if !found {
		t.Error("the catalog embeds no ClusterServiceVersion")
	}
}

// TestCatalogOLMv1 validates catalog-olmv1/ with opm and checks that it is
// catalog/ with one difference: the bundle is named by the image that
// `make bundle-build` builds (the manager image's repository with -bundle,
// the same tag), which OLM v1 pulls, since it reads no manifests from a
// catalog.
func TestCatalogOLMv1(t *testing.T) {
	root := controlplane.RepoRoot()
	opm := validatedCatalog(t, root, "catalog-olmv1")
	v0, v1 := renderCatalog(t, opm, filepath.Join(root, "catalog")), renderCatalog(t, opm, filepath.Join(root, "catalog-olmv1"))
	if len(v0) != len(v1) {
		t.Fatalf("catalog-olmv1 has %d objects, catalog %d: run `make catalog-olmv1`", len(v1), len(v0))
	}
	manager := ""
	for _, obj := range v0 {
		if obj["schema"] != "olm.bundle" {
			continue
		}
		for _, ri := range obj["relatedImages"].([]any) {
			if ri := ri.(map[string]any); ri["name"] == "manager" {
				manager = ri["image"].(string)
			}
		}
	}
	repo, tag, ok := strings.Cut(manager, ":v")
	if !ok {
		t.Fatalf("the bundle's manager image %q has no version tag", manager)
	}
	want := repo + "-bundle:v" + tag
	images := 0
	for i, obj := range v1 {
		if obj["schema"] == "olm.bundle" {
			images++
			if obj["image"] != want {
				t.Errorf("catalog-olmv1's bundle image = %v, want %s: run `make catalog-olmv1`", obj["image"], want)
			}
			obj["image"] = ""
		}
		if !reflect.DeepEqual(obj, v0[i]) {
			t.Errorf("catalog-olmv1's object %d (%v %v) differs from catalog's beyond the bundle image: run `make catalog-olmv1`", i, obj["schema"], obj["name"])
		}
	}
	if images != 1 {
		t.Errorf("catalog-olmv1 has %d bundles, want 1", images)
	}
}

// renderCatalog is the file-based catalog in dir, as `opm render` streams it.
func renderCatalog(t *testing.T, opm, dir string) []map[string]any {
	t.Helper()
	out, err := exec.Command(opm, "render", dir, "--output=json").Output()
	if err != nil {
		t.Fatalf("opm render %s: %v", dir, err)
	}
	var objs []map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("decoding opm's render of %s: %v", dir, err)
		}
		objs = append(objs, m)
	}
}

// validatedCatalog checks the catalog in folder dir of the repository with
// `opm validate` and returns bin/opm's path.
func validatedCatalog(t *testing.T, root, dir string) string {
	t.Helper()
	opm := filepath.Join(root, "bin", "opm")
	if _, err := os.Stat(opm); err != nil {
		t.Fatalf("bin/opm is missing: run `make e2e-tools` (%v)", err)
	}
	if out, err := exec.Command(opm, "validate", filepath.Join(root, dir)).CombinedOutput(); err != nil {
		t.Fatalf("opm validate %s: %v\n%s", dir, err, out)
	}
	return opm
}

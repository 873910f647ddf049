package krew

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/krew/pkg/index"
	"sigs.k8s.io/yaml"
)

// TestManifest: the krew manifest make dist wrote is a Plugin krew reads
// (strictly: a field krew does not know fails), of a safe name, and every
// platform names an archive beside it whose sha256 it and checksums.txt
// agree on, which holds the platform's bin and files, for the os and arch
// its selector picks, at a URI of the manifest's version.
func TestManifest(t *testing.T) {
	dir := os.Getenv("DIST_DIR")
	if dir == "" {
		t.Skip("DIST_DIR names no make dist output (make test-dist sets it)")
	}
	b, err := os.ReadFile(filepath.Join(dir, "csv-cleaner.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var p index.Plugin
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		t.Fatalf("krew cannot read the manifest: %v", err)
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" {
		t.Errorf("apiVersion %q, kind %q", p.APIVersion, p.Kind)
	}
	if !regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`).MatchString(p.Name) || p.Name != "csv-cleaner" {
		t.Errorf("plugin name %q", p.Name)
	}
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+`).MatchString(p.Spec.Version) || p.Spec.ShortDescription == "" || p.Spec.Homepage == "" {
		t.Errorf("spec: version %q, shortDescription %q, homepage %q", p.Spec.Version, p.Spec.ShortDescription, p.Spec.Homepage)
	}
	sums := checksums(t, filepath.Join(dir, "checksums.txt"))
	if len(p.Spec.Platforms) == 0 || len(p.Spec.Platforms) != len(sums) {
		t.Fatalf("%d platforms, %d archives in checksums.txt", len(p.Spec.Platforms), len(sums))
	}
	for _, pl := range p.Spec.Platforms {
		checkPlatform(t, dir, p.Spec.Version, pl, sums)
	}
}

func checksums(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		sum, name, ok := strings.Cut(s.Text(), "  ")
		if !ok {
			t.Fatalf("checksums.txt line %q is not sha256sum's", s.Text())
		}
		out[name] = sum
	}
	return out
}

func checkPlatform(t *testing.T, dir, version string, pl index.Platform, sums map[string]string) {
	t.Helper()
	archive := path.Base(pl.URI)
	sel, err := metav1.LabelSelectorAsSelector(pl.Selector)
	if err != nil || pl.Selector == nil {
		t.Fatalf("%s: selector %v: %v", archive, pl.Selector, err)
	}
	osName, arch := pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]
	if !sel.Matches(labels.Set{"os": osName, "arch": arch}) || !strings.Contains(archive, "_"+osName+"_"+arch+".") {
		t.Errorf("%s: selector %v does not pick the archive's platform", archive, pl.Selector)
	}
	if !strings.Contains(pl.URI, "/"+version+"/") || !strings.HasPrefix(pl.URI, "https://") {
		t.Errorf("%s: URI %q is not of version %s", archive, pl.URI, version)
	}
	b, err := os.ReadFile(filepath.Join(dir, archive))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != pl.Sha256 || got != sums[archive] {
		t.Errorf("%s: sha256 %s, the manifest says %s, checksums.txt %s", archive, got, pl.Sha256, sums[archive])
	}
	names := entries(t, filepath.Join(dir, archive))
	want := []string{pl.Bin}
	for _, f := range pl.Files {
		if f.From == "" || f.To == "" {
			t.Errorf("%s: a file operation without from or to: %+v", archive, f)
		}
		want = append(want, f.From)
	}
	for _, w := range want {
		if !names[w] {
			t.Errorf("%s holds no %s (it holds %v)", archive, w, names)
		}
	}
}

// entries are the regular files of a tar.gz or zip (krew takes no other).
func entries(t *testing.T, file string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	if strings.HasSuffix(file, ".zip") {
		z, err := zip.OpenReader(file)
		if err != nil {
			t.Fatal(err)
		}
		defer z.Close()
		for _, f := range z.File {
			out[f.Name] = f.Mode().IsRegular()
		}
		return out
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(z)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = h.Typeflag == tar.TypeReg
	}
}

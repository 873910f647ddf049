package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestArchivesAreReproducible: the same files give the same archive bytes,
// whenever they are written.
func TestArchivesAreReproducible(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "bin")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho csv-cleaner\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := []entry{{name: "csv-cleaner", path: src, mode: 0o755}, {name: pluginBin, path: src, mode: 0o755}}
	when := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for _, write := range []func(string, []entry, time.Time) error{writeTarGz, writeZip} {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		if err := write(a, files, when); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
		if err := write(b, files, when); err != nil {
			t.Fatal(err)
		}
		ab, _ := os.ReadFile(a)
		bb, _ := os.ReadFile(b)
		if !bytes.Equal(ab, bb) {
			t.Error("two archives of the same files differ")
		}
	}
}

// TestManifestNamesEachArchive: one platform an archive, with its selector,
// its URI at the version and its sha256.
func TestManifestNamesEachArchive(t *testing.T) {
	out := filepath.Join(t.TempDir(), "csv-cleaner.yaml")
	o := Options{Version: "1.2.3", URL: "https://example.com/v{version}/{archive}"}
	err := writeManifest(out, o, []Artifact{
		{Name: "csv-cleaner_1.2.3_linux_arm64.tar.gz", OS: "linux", Arch: "arm64", Sha256: strings.Repeat("a", 64), Bin: pluginBin},
		{Name: "csv-cleaner_1.2.3_windows_amd64.zip", OS: "windows", Arch: "amd64", Sha256: strings.Repeat("b", 64), Bin: pluginBin + ".exe"},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	for _, want := range []string{"kind: Plugin", "version: v1.2.3", "uri: https://example.com/v1.2.3/csv-cleaner_1.2.3_linux_arm64.tar.gz",
		"os: windows", "bin: kubectl-csv_cleaner.exe", "sha256: " + strings.Repeat("b", 64)} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the manifest lacks %q:\n%s", want, b)
		}
	}
}

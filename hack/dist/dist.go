package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The files beside the archives.
const (
	checksumsFile = "checksums.txt"
	manifestFile  = "csv-cleaner.yaml"
	// pluginBin is the binary's name as kubectl finds a plugin.
	pluginBin = "kubectl-csv_cleaner"
)

// Artifact is one archive made.
type Artifact struct {
	Name     string
	OS, Arch string
	Size     int64
	Sha256   string
	// Bin is the plugin's binary inside it.
	Bin string
}

// Dist builds o's archives, their checksums and the krew manifest.
func Dist(o Options) ([]Artifact, error) {
	when, err := commitTime(o.Date)
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(o.Out); err != nil {
		return nil, fmt.Errorf("emptying %s: %w", o.Out, err)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", o.Out, err)
	}
	var out []Artifact
	for _, p := range o.Platforms {
		goos, goarch, ok := strings.Cut(p, "/")
		if !ok {
			return nil, fmt.Errorf("platform %q is not os/arch", p)
		}
		a, err := buildPlatform(o, goos, goarch, when)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, a)
	}
	if err := writeChecksums(filepath.Join(o.Out, checksumsFile), out); err != nil {
		return nil, err
	}
	return out, writeManifest(filepath.Join(o.Out, manifestFile), o, out)
}

// commitTime is the archives' entries' time: the commit's date, else the epoch.
func commitTime(date string) (time.Time, error) {
	if date == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, date)
	if err != nil {
		return time.Time{}, fmt.Errorf("the date %q is not RFC 3339: %w", date, err)
	}
	return t.UTC(), nil
}

// buildPlatform builds the binary for goos/goarch and archives it.
func buildPlatform(o Options, goos, goarch string, when time.Time) (Artifact, error) {
	exe := ""
	if goos == "windows" {
		exe = ".exe"
	}
	tmp, err := os.MkdirTemp("", "csv-cleaner-dist-")
	if err != nil {
		return Artifact{}, fmt.Errorf("creating a build folder: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	bin := filepath.Join(tmp, "csv-cleaner"+exe)
	ldflags := fmt.Sprintf("-s -w -X main.version=%s -X main.commit=%s -X main.date=%s", o.Version, o.Commit, o.Date)
	build := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", bin, "./cmd/csv-cleaner")
	build.Dir = o.Root
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	if b, err := build.CombinedOutput(); err != nil {
		return Artifact{}, fmt.Errorf("go build: %w\n%s", err, b)
	}
	files := []entry{{name: "csv-cleaner" + exe, path: bin, mode: 0o755}, {name: pluginBin + exe, path: bin, mode: 0o755},
		{name: "LICENSE", path: filepath.Join(o.Root, "LICENSE"), mode: 0o644}, {name: "README.md", path: filepath.Join(o.Root, "README.md"), mode: 0o644}}
	a := Artifact{OS: goos, Arch: goarch, Bin: pluginBin + exe, Name: fmt.Sprintf("csv-cleaner_%s_%s_%s.tar.gz", o.Version, goos, goarch)}
	write := writeTarGz
	if goos == "windows" {
		a.Name, write = strings.TrimSuffix(a.Name, ".tar.gz")+".zip", writeZip
	}
	path := filepath.Join(o.Out, a.Name)
	if err := write(path, files, when); err != nil {
		return Artifact{}, err
	}
	return a, a.measure(path)
}

// measure sets the archive's size and sha256.
func (a *Artifact) measure(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	sum := sha256.Sum256(b)
	a.Size, a.Sha256 = int64(len(b)), hex.EncodeToString(sum[:])
	return nil
}

// writeChecksums writes each archive's sha256 as sha256sum prints it.
func writeChecksums(path string, artifacts []Artifact) error {
	var b strings.Builder
	for _, a := range artifacts {
		fmt.Fprintf(&b, "%s  %s\n", a.Sha256, a.Name)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

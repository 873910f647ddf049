package image_test

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"golang.org/x/mod/modfile"

	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
)

// The build arguments the test builds with.
const (
	testVersion = "9.8.7-dockerfile-test"
	testCommit  = "0123456789ab"
	testDate    = "2026-11-28T12:00:00Z"
)

func TestDockerfile(t *testing.T) {
	root := controlplane.RepoRoot()
	raw, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	ast, err := parser.Parse(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("parsing the Dockerfile: %v", err)
	}
	stages, _, err := instructions.Parse(ast.AST, nil)
	if err != nil {
		t.Fatalf("parsing the Dockerfile: %v", err)
	}
	if len(stages) != 2 {
		t.Fatalf("%d stages, want a build stage and the image", len(stages))
	}
	build, final := stages[0], stages[1]

	t.Run("the image", func(t *testing.T) {
		if final.BaseName != "gcr.io/distroless/static:nonroot" {
			t.Errorf("base image %q, want gcr.io/distroless/static:nonroot", final.BaseName)
		}
		var user string
		var entrypoint []string
		for _, c := range final.Commands {
			switch c := c.(type) {
			case *instructions.UserCommand:
				user = c.User
			case *instructions.EntrypointCommand:
				entrypoint = c.CmdLine
			case *instructions.CopyCommand:
				if c.From != build.Name {
					t.Errorf("the image copies from %q, want only the build stage %q", c.From, build.Name)
				}
			case *instructions.RunCommand:
				t.Errorf("the image runs %v: a distroless image has no shell", c.CmdLine)
			}
		}
		if user != "65532:65532" && user != "nonroot:nonroot" {
			t.Errorf("USER %q, want distroless's nonroot user 65532:65532", user)
		}
		if !slices.Equal(entrypoint, []string{"/csv-cleaner"}) {
			t.Errorf("ENTRYPOINT %v, want [/csv-cleaner] in exec form", entrypoint)
		}
	})

	t.Run("the builder's Go is go.mod's", func(t *testing.T) {
		gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := modfile.ParseLax("go.mod", gomod, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Join(strings.SplitN(f.Go.Version, ".", 3)[:2], ".")
		if !strings.HasPrefix(build.BaseName, "golang:"+want) {
			t.Errorf("build stage FROM %s, want golang:%s (go.mod says go %s)", build.BaseName, want, f.Go.Version)
		}
	})

	t.Run("the binary", func(t *testing.T) {
		bin := runBuildStage(t, root, build, final)
		if info, err := buildinfo.ReadFile(bin); err != nil {
			t.Errorf("reading the binary's build info: %v", err)
		} else {
			settings := map[string]string{}
			for _, s := range info.Settings {
				settings[s.Key] = s.Value
			}
			if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
				t.Errorf("build settings CGO_ENABLED=%q -trimpath=%q, want 0 and true", settings["CGO_ENABLED"], settings["-trimpath"])
			}
		}
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatalf("opening the binary: %v", err)
		}
		defer func() { _ = f.Close() }()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Error("the binary needs a dynamic loader: it would not start on distroless/static")
			}
		}
		if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
			t.Errorf("the binary links %v dynamically", libs)
		}
		out, err := exec.Command(bin, "version", "-o", "json").Output()
		if err != nil {
			t.Fatalf("csv-cleaner version: %v", err)
		}
		var got struct{ Version, Commit, Date string }
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("csv-cleaner version -o json printed %q: %v", out, err)
		}
		if got.Version != testVersion || got.Commit != testCommit || got.Date != testDate {
			t.Errorf("csv-cleaner version printed %+v, want the build arguments %q, %q, %q", got, testVersion, testCommit, testDate)
		}
	})
}

// runBuildStage lays out what the build stage copies in a scratch directory
// and runs its RUN commands there with its ARGs (VERSION set), as docker
// build would; it returns the binary the image copies.
func runBuildStage(t *testing.T, root string, build, final instructions.Stage) string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	// Absolute paths of the build stage live under dir.
	rebase := func(s string) string { return strings.ReplaceAll(s, "/out/", out+"/") }
	work := filepath.Join(dir, "src")
	env := append(os.Environ(), "VERSION="+testVersion, "COMMIT="+testCommit, "DATE="+testDate, "TARGETARCH="+runtime.GOARCH)
	for _, c := range build.Commands {
		switch c := c.(type) {
		case *instructions.WorkdirCommand:
			work = filepath.Join(dir, c.Path)
			if err := os.MkdirAll(work, 0o755); err != nil {
				t.Fatal(err)
			}
		case *instructions.ArgCommand:
			for _, a := range c.Args {
				if a.Value != nil && a.Key != "VERSION" && a.Key != "COMMIT" && a.Key != "DATE" {
					env = append(env, a.Key+"="+*a.Value)
				}
			}
		case *instructions.CopyCommand:
			for _, src := range c.SourcePaths {
				dest := filepath.Join(work, c.DestPath)
				if !strings.HasSuffix(src, "/") && strings.HasSuffix(c.DestPath, "/") {
					dest = filepath.Join(dest, filepath.Base(src)) // a file into a directory
				}
				if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
					t.Fatal(err)
				}
				if b, err := exec.Command("cp", "-r", filepath.Join(root, src), dest).CombinedOutput(); err != nil {
					t.Fatalf("COPY %s %s: %v\n%s", src, c.DestPath, err, b)
				}
			}
		case *instructions.RunCommand:
			line := rebase(strings.Join(c.CmdLine, " "))
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sh", "-c", line)
			cmd.Dir, cmd.Env = work, env
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("RUN %s: %v\n%s", line, err, b)
			}
			t.Logf("RUN %s", line)
		}
	}
	for _, c := range final.Commands {
		if cp, ok := c.(*instructions.CopyCommand); ok && len(cp.SourcePaths) == 1 {
			bin := rebase(cp.SourcePaths[0])
			if _, err := os.Stat(bin); err != nil {
				t.Fatalf("the image copies %s from the build stage, which did not produce it: %v", cp.SourcePaths[0], err)
			}
			return bin
		}
	}
	t.Fatal("the image copies no binary from the build stage")
	return ""
}

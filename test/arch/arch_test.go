package arch

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// root is the module's root, from this package's directory.
const root = "../.."

func drawing(t *testing.T) Drawing {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	d, err := ReadDrawing(f)
	if err != nil {
		t.Fatalf("docs/architecture.md: %v", err)
	}
	return d
}

// TestEveryImportIsDrawn fails an import of one package of csv-cleaner by
// another that docs/architecture.md does not draw, and an arrow of the
// drawing no code imports.
func TestEveryImportIsDrawn(t *testing.T) {
	d := drawing(t)
	imports, err := Imports(root, "api", "cmd", "pkg")
	if err != nil {
		t.Fatal(err)
	}
	used := map[[2]string]bool{}
	for _, dir := range sortedKeys(imports) {
		from := d.Node(dir)
		if from == "" {
			t.Errorf("%s is not drawn in docs/architecture.md", dir)
			continue
		}
		for _, to := range imports[dir] {
			n := d.Node(to)
			switch {
			case n == "":
				t.Errorf("%s imports %s, which docs/architecture.md does not draw", dir, to)
			case n == from:
			case !slices.Contains(d.Arrows[from], n):
				t.Errorf("%s imports %s: docs/architecture.md draws no arrow %s --> %s", dir, to, from, n)
			default:
				used[[2]string{from, n}] = true
			}
		}
	}
	for _, from := range sortedKeys(d.Arrows) {
		for _, to := range d.Arrows[from] {
			if !used[[2]string{from, to}] {
				t.Errorf("docs/architecture.md draws %s --> %s, and no package of %s imports one of %s", from, to, from, to)
			}
		}
	}
}

var update = flag.Bool("update", false, "write .golangci.yml's depguard rules from docs/architecture.md's drawing")

// TestLintIsTheDrawing fails a depguard rule of .golangci.yml that holds
// other files than one node's packages, or allows other imports of
// csv-cleaner than the node's arrows, and a node without its rule.
func TestLintIsTheDrawing(t *testing.T) {
	d := drawing(t)
	path := filepath.Join(root, ".golangci.yml")
	rules, err := ReadLint(path)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		writeRules(t, path, d, rules)
		if rules, err = ReadLint(path); err != nil {
			t.Fatal(err)
		}
	}
	for _, node := range sortedKeys(d.Packages) {
		want := Rule{Files: Files(d.Packages[node]), Allow: d.Allowed(node)}
		got, ok := rules[node]
		switch {
		case !ok:
			t.Errorf(".golangci.yml has no depguard rule %q for %s; want\n%s", node, strings.Join(d.Packages[node], ", "), want)
		case !slices.Equal(got.Files, want.Files) || !slices.Equal(got.Allow, want.Allow):
			t.Errorf(".golangci.yml's depguard rule %q is\n%s\nthe drawing's is\n%s", node, got, want)
		}
		delete(rules, node)
	}
	for _, name := range sortedKeys(rules) {
		t.Errorf(".golangci.yml's depguard rule %q is no node of docs/architecture.md", name)
	}
}

// writeRules writes the drawing's depguard rules into the configuration at
// path, each keeping its description.
func writeRules(t *testing.T, path string, d Drawing, rules map[string]Rule) {
	t.Helper()
	descs := map[string]string{}
	for name, r := range rules {
		descs[name] = r.Desc
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Splice(string(raw), Render(d, descs))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNoRoomOverAFifth fails a package, or a top-level folder under pkg/,
// that holds more than a fifth of csv-cleaner's Go lines (tests left out):
// a room that big is split where it reads better.
func TestNoRoomOverAFifth(t *testing.T) {
	byDir, byFolder, total, err := Lines(root, "api", "cmd", "pkg")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []map[string]int{byDir, byFolder} {
		for _, dir := range sortedKeys(m) {
			if 5*m[dir] > total {
				t.Errorf("%s holds %d of the %d Go lines of api/, cmd/ and pkg/ (%.1f%%), more than a fifth: split it", dir, m[dir], total, 100*float64(m[dir])/float64(total))
			}
		}
	}
}

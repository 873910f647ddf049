package doclinks

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSlug(t *testing.T) {
	for _, tt := range []struct{ title, want string }{
		{"The RBAC hold", "the-rbac-hold"},
		{"What would an uninstall delete? `csv-cleaner plan`", "what-would-an-uninstall-delete-csv-cleaner-plan"},
		{"OLM v1: ClusterExtensions", "olm-v1-clusterextensions"},
		{"What csv-cleaner may do, and why", "what-csv-cleaner-may-do-and-why"},
		{"A first start · 10,000 CSVs", "a-first-start--10000-csvs"},
		{"snake_case stays", "snake_case-stays"},
	} {
		if got := Slug(tt.title); got != tt.want {
			t.Errorf("Slug(%q) = %q, want %q", tt.title, got, tt.want)
		}
	}
}

func TestLinksAndAnchors(t *testing.T) {
	text := "# Title\n\nSee [the rules\nbelow](#rules), [a page](docs/a.md#part) and [the web](https://example.com).\n" +
		"`[not](a-link.md)`\n```\n[nor](this.md)\n## Not a heading\n```\n## Rules\n## Rules\n<a name=\"by-hand\"></a>\n#NotAHeading\n"
	if got, want := Links(text), []string{"#rules", "docs/a.md#part", "https://example.com"}; !slices.Equal(got, want) {
		t.Errorf("Links = %q, want %q", got, want)
	}
	a := Anchors(text)
	for _, want := range []string{"title", "rules", "rules-1", "by-hand"} {
		if !a[want] {
			t.Errorf("anchor %q missing from %v", want, a)
		}
	}
	for _, not := range []string{"not-a-heading", "notaheading"} {
		if a[not] {
			t.Errorf("anchor %q found, want none (a code block, a line without a space)", not)
		}
	}
}

// TestCheckFindsBrokenLinks builds a small tree with a link to a missing
// file, to a missing heading, and good ones: only the two broken are reported.
func TestCheckFindsBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# Top\n[ok](docs/a.md#part-one) [ok](#top) [gone](docs/b.md) [renamed](docs/a.md#part-two) [dir](docs)\n")
	write("docs/a.md", "# A\n## Part one\n[back](../README.md#top)\n")
	problems, err := Check(root, []string{"README.md", "docs/a.md"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Target)
	}
	if want := []string{"docs/b.md", "docs/a.md#part-two"}; !slices.Equal(got, want) {
		t.Errorf("broken links %q, want %q", got, want)
	}
}

// TestProjectDocs checks the README and every page of docs/.
func TestProjectDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{"README.md"}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		rel, _ := filepath.Rel(root, p)
		files = append(files, filepath.ToSlash(rel))
	}
	problems, err := Check(root, files)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, p := range problems {
		lines = append(lines, p.String())
	}
	if len(lines) > 0 {
		t.Errorf("%d broken links:\n%s", len(lines), strings.Join(lines, "\n"))
	}
}

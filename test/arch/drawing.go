package arch

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// Module is csv-cleaner's module path.
const Module = "github.com/csv-cleaner/csv-cleaner"

// Drawing is the flowchart: each node's packages (directories under the
// module) and the arrows between nodes.
type Drawing struct {
	// Packages maps a node to the directories it draws ("pkg/decide",
	// "pkg/decide/olmv1").
	Packages map[string][]string
	// Arrows maps a node to the nodes it may import, sorted.
	Arrows map[string][]string
}

var (
	nodeLine  = regexp.MustCompile(`^\s*([A-Za-z0-9_]+)\["([^"<]+)(<br/>[^"]*)?"\]\s*$`)
	arrowLine = regexp.MustCompile(`^\s*([A-Za-z0-9_ &]+?)\s*-->\s*([A-Za-z0-9_ &]+?)\s*$`)
)

// ReadDrawing reads the first mermaid block of a markdown document: node
// lines `id["dir, dir<br/>words"]` and arrow lines `a & b --> c & d`. A
// line of the block that is neither, other than its flowchart header, is
// an error, and so is an arrow from or to a node not declared.
func ReadDrawing(r io.Reader) (Drawing, error) {
	d := Drawing{Packages: map[string][]string{}, Arrows: map[string][]string{}}
	in, seen := false, false
	sc := bufio.NewScanner(r)
	var arrows [][2][]string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && strings.TrimSpace(line) == "```mermaid" && !seen:
			in, seen = true, true
			continue
		case in && strings.TrimSpace(line) == "```":
			in = false
			continue
		case !in:
			continue
		}
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "flowchart") || strings.HasPrefix(t, "%%") {
			continue
		}
		if m := nodeLine.FindStringSubmatch(line); m != nil {
			for _, dir := range strings.Split(m[2], ",") {
				d.Packages[m[1]] = append(d.Packages[m[1]], strings.TrimSpace(dir))
			}
			continue
		}
		if m := arrowLine.FindStringSubmatch(line); m != nil {
			arrows = append(arrows, [2][]string{split(m[1]), split(m[2])})
			continue
		}
		return d, fmt.Errorf("the drawing's line %q is neither a node nor an arrow", t)
	}
	if err := sc.Err(); err != nil {
		return d, err
	}
	if !seen {
		return d, fmt.Errorf("no mermaid block")
	}
	for _, a := range arrows {
		for _, from := range a[0] {
			for _, to := range a[1] {
				for _, n := range []string{from, to} {
					if _, ok := d.Packages[n]; !ok {
						return d, fmt.Errorf("the arrow %s --> %s names %s, which the drawing does not declare", from, to, n)
					}
				}
				if !slices.Contains(d.Arrows[from], to) {
					d.Arrows[from] = append(d.Arrows[from], to)
				}
			}
		}
	}
	for n := range d.Arrows {
		slices.Sort(d.Arrows[n])
	}
	return d, nil
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, "&") {
		out = append(out, strings.TrimSpace(f))
	}
	return out
}

// Node is the node that draws the directory dir, or "".
func (d Drawing) Node(dir string) string {
	for n, dirs := range d.Packages {
		if slices.Contains(dirs, dir) {
			return n
		}
	}
	return ""
}

// Allowed is the import paths a package of node may import: its own
// node's packages and those of the nodes it has arrows to, sorted.
func (d Drawing) Allowed(node string) []string {
	var out []string
	for _, n := range append([]string{node}, d.Arrows[node]...) {
		for _, dir := range d.Packages[n] {
			out = append(out, Module+"/"+dir)
		}
	}
	slices.Sort(out)
	return out
}

// Files is the depguard files patterns of a node's directories: each
// directory's own Go files (gobwas/glob's `**/` needs a folder, so
// `dir/**/*.go` would leave dir's own files out), tests excepted.
func Files(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		out = append(out, "**/"+d+"/*.go")
	}
	return append(out, "!$test")
}

package doclinks

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Problem is one broken link.
type Problem struct {
	// File is the Markdown file that holds the link, Target what it links to.
	File, Target string
	// Why says what is broken.
	Why string
}

func (p Problem) String() string { return fmt.Sprintf("%s: link %q: %s", p.File, p.Target, p.Why) }

var (
	// link matches the target of an inline link or image, whose text may span lines.
	link = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// codeSpan matches inline code, whose brackets are not links.
	codeSpan = regexp.MustCompile("`[^`\n]*`")
	// explicitAnchor matches an HTML anchor a page sets by hand.
	explicitAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// Check reads each Markdown file (paths relative to root) and reports every
// relative link whose file or anchor does not exist.
func Check(root string, files []string) ([]Problem, error) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		raw, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		a := Anchors(string(raw))
		anchors[path] = a
		return a, nil
	}
	var out []Problem
	for _, file := range files {
		raw, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", file, err)
		}
		for _, target := range Links(string(raw)) {
			if external(target) {
				continue
			}
			path, fragment, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
				info, err := os.Stat(filepath.Join(root, dest))
				if err != nil {
					out = append(out, Problem{File: file, Target: target, Why: "no file " + dest})
					continue
				}
				if info.IsDir() || fragment == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
			}
			if fragment == "" {
				continue
			}
			a, err := anchorsOf(dest)
			if err != nil {
				return nil, err
			}
			if !a[fragment] {
				out = append(out, Problem{File: file, Target: target, Why: fmt.Sprintf("no heading of %s has the anchor #%s", dest, fragment)})
			}
		}
	}
	return out, nil
}

// external reports whether a link leaves the repository.
func external(target string) bool {
	for _, scheme := range []string{"http://", "https://", "mailto:"} {
		if strings.HasPrefix(target, scheme) {
			return true
		}
	}
	return false
}

// Links returns the targets of a Markdown text's inline links, outside
// fenced code blocks and code spans.
func Links(text string) []string {
	var out []string
	for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(prose(text), ""), -1) {
		out = append(out, m[1])
	}
	return out
}

// Anchors returns the anchors of a Markdown text: its headings' (GitHub's
// rule, a repeated one numbered -1, -2, …) and the ones it sets by hand.
func Anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(prose(text), "\n") {
		for _, m := range explicitAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		title, ok := heading(line)
		if !ok {
			continue
		}
		slug := Slug(title)
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// heading returns the title of an ATX heading line ("## Title").
func heading(line string) (string, bool) {
	trimmed := strings.TrimLeft(line, "#")
	level := len(line) - len(trimmed)
	if level == 0 || level > 6 || (trimmed != "" && trimmed[0] != ' ') {
		return "", false
	}
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(trimmed), "#")), true
}

// Slug is the anchor GitHub gives a heading: lower case, inline code's
// backquotes and every punctuation mark but - and _ dropped, each space a -.
func Slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// prose blanks the lines of fenced code blocks, keeping the line count.
func prose(text string) string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, line := range lines {
		t := strings.TrimSpace(line)
		switch {
		case fence == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			fence = t[:3]
			lines[i] = ""
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

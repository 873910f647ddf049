package arch

import (
	"fmt"
	"slices"
	"strings"
)

// Header opens .golangci.yml's depguard rules, which Render writes.
const Header = `        # Generated from docs/architecture.md's drawing (go test ./test/arch
        # -update writes them), and held to it by test/arch: a rule per node,
        # its files the node's packages (each package's own files: gobwas/glob's
        # "**/" needs a folder, so "pkg/decide/**/*.go" would leave pkg/decide's
        # own files out), its allow list the node's own packages and those its
        # arrows point to; the rest of csv-cleaner denied.
`

// pure is what the rule of the node that decides denies beyond the rest
// of csv-cleaner: the clients.
var pure = []string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go"}

// Render writes the depguard rules of the drawing, each node's denials
// described by descs[node] (its "must not"), the node called "decide"
// denied the clients as well.
func Render(d Drawing, descs map[string]string) string {
	var b strings.Builder
	b.WriteString(Header)
	nodes := sortedKeys(d.Packages)
	for _, n := range nodes {
		desc := descs[n]
		if desc == "" {
			desc = "imports only what docs/architecture.md draws"
		}
		r := Rule{Files: Files(d.Packages[n]), Allow: d.Allowed(n)}
		fmt.Fprintf(&b, "        %s:\n          list-mode: lax\n          files: [%s]\n          deny:\n", n, quoted(r.Files))
		deny := []string{Module + "/api", Module + "/cmd", Module + "/pkg"}
		if n == "decide" {
			deny = append(deny, pure...)
		}
		for _, p := range deny {
			why := desc
			if slices.Contains(pure, p) {
				why = "pkg/decide must not read the cluster: hand it what was read"
			}
			fmt.Fprintf(&b, "            - pkg: %q\n              desc: %q\n", p, why)
		}
		b.WriteString("          allow:\n")
		for _, a := range r.Allow {
			fmt.Fprintf(&b, "            - %q\n", a)
		}
	}
	return b.String()
}

// Splice replaces the depguard rules of a golangci-lint configuration
// (from the line after "      rules:" under depguard to "  exclusions:")
// with rules.
func Splice(config, rules string) (string, error) {
	const open, end = "    depguard:\n      rules:\n", "  exclusions:"
	i := strings.Index(config, open)
	j := strings.Index(config, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("no depguard rules followed by %q", end)
	}
	return config[:i+len(open)] + rules + config[j:], nil
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// String prints a rule as .golangci.yml writes it.
func (r Rule) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "          files: [%s]\n          allow:\n", quoted(r.Files))
	for _, a := range r.Allow {
		fmt.Fprintf(&b, "            - %q\n", a)
	}
	return b.String()
}

func quoted(s []string) string {
	var q []string
	for _, x := range s {
		q = append(q, fmt.Sprintf("%q", x))
	}
	return strings.Join(q, ", ")
}

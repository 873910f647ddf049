package arch

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Rule is one depguard rule of .golangci.yml: the files it holds and the
// imports of csv-cleaner it allows (the rest of the module's denied).
type Rule struct {
	Files []string
	Allow []string
	// Desc is the first denial's description.
	Desc string
}

// ReadLint reads the depguard rules of a golangci-lint v2 configuration.
func ReadLint(path string) (map[string]Rule, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Linters struct {
			Settings struct {
				Depguard struct {
					Rules map[string]struct {
						Files []string `json:"files"`
						Allow []string `json:"allow"`
						Deny  []struct {
							Desc string `json:"desc"`
						} `json:"deny"`
					} `json:"rules"`
				} `json:"depguard"`
			} `json:"settings"`
		} `json:"linters"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	out := map[string]Rule{}
	for name, r := range cfg.Linters.Settings.Depguard.Rules {
		var allow []string
		for _, a := range r.Allow {
			if strings.HasPrefix(a, Module+"/") {
				allow = append(allow, a)
			}
		}
		slices.Sort(allow)
		rule := Rule{Files: r.Files, Allow: allow}
		if len(r.Deny) > 0 {
			rule.Desc = r.Deny[0].Desc
		}
		out[name] = rule
	}
	return out, nil
}

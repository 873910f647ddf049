package main

import (
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// The krew plugin manifest (krew.googlecontainertools.github.com/v1alpha2
// Plugin), as krew's index.Plugin reads it: hack/krew checks this file with
// krew's own types.
type (
	plugin struct {
		APIVersion string     `json:"apiVersion"`
		Kind       string     `json:"kind"`
		Metadata   metadata   `json:"metadata"`
		Spec       pluginSpec `json:"spec"`
	}
	metadata struct {
		Name string `json:"name"`
	}
	pluginSpec struct {
		Version          string     `json:"version"`
		Homepage         string     `json:"homepage"`
		ShortDescription string     `json:"shortDescription"`
		Description      string     `json:"description"`
		Caveats          string     `json:"caveats"`
		Platforms        []platform `json:"platforms"`
	}
	platform struct {
		Selector selector `json:"selector"`
		URI      string   `json:"uri"`
		Sha256   string   `json:"sha256"`
		Files    []file   `json:"files"`
		Bin      string   `json:"bin"`
	}
	selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	}
	file struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
)

// The plugin's name: kubectl csv-cleaner, its binary kubectl-csv_cleaner.
const pluginName = "csv-cleaner"

// writeManifest writes the krew manifest of the archives.
func writeManifest(path string, o Options, artifacts []Artifact) error {
	p := plugin{APIVersion: "krew.googlecontainertools.github.com/v1alpha2", Kind: "Plugin", Metadata: metadata{Name: pluginName},
		Spec: pluginSpec{Version: "v" + o.Version, Homepage: "https://github.com/csv-cleaner/csv-cleaner",
			ShortDescription: "Plan, undo and finish the uninstall of OLM operators",
			Description: "csv-cleaner makes the uninstall of operators installed with OLM complete, safe and resumable.\n" +
				"This plugin is its command line: plan shows what an uninstall would delete and keep,\n" +
				"undo brings back what an uninstall under a backup destroyed, from its verified Velero Backup,\n" +
				"and release removes every finalizer csv-cleaner placed.",
			Caveats: "The controller itself is installed with OLM (OperatorHub): see docs/install.md.\n" +
				"undo needs Velero, and csv-cleaner's CleanupPolicy with backup, in the cluster."}}
	for _, a := range artifacts {
		uri := strings.NewReplacer("{version}", o.Version, "{archive}", a.Name).Replace(o.URL)
		p.Spec.Platforms = append(p.Spec.Platforms, platform{
			Selector: selector{MatchLabels: map[string]string{"os": a.OS, "arch": a.Arch}},
			URI:      uri, Sha256: a.Sha256, Bin: a.Bin,
			Files: []file{{From: a.Bin, To: "."}, {From: "LICENSE", To: "."}},
		})
	}
	b, err := yaml.Marshal(p)
	if err != nil {
		return fmt.Errorf("writing the krew manifest: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Command bundle turns csv-cleaner's kustomized manifests into an OLM
// registry+v1 bundle: `bin/kustomize build manifests/olm | go run ./hack/bundle`.
//
// It does what `operator-sdk generate bundle` does for a kubebuilder
// project (operator-sdk is not on this machine's module proxy): the base
// CSV from manifests/olm gets the Deployment, the RBAC bound to its
// ServiceAccount, the sample CleanupPolicy as alm-examples, the version and
// the image; the CRDs and the metrics Service are written beside it; the
// Namespace, ServiceAccount, Roles and bindings are left to OLM, which
// creates them from the CSV. Any other kind is an error, so nothing is
// dropped silently.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
)

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "Version of the bundle (semver, without a leading v).")
	flag.StringVar(&o.out, "out", "bundle", "Directory to write the bundle to (its manifests/ and metadata/ are replaced).")
	flag.StringVar(&o.dockerfile, "dockerfile", "bundle.Dockerfile", "Where to write the bundle image's Dockerfile.")
	flag.StringVar(&o.pkg, "package", "csv-cleaner", "OLM package name.")
	flag.StringVar(&o.channel, "channel", "stable", "Channel the bundle is published in (also the default channel).")
	flag.StringVar(&o.description, "description", "manifests/olm/description.md", "Markdown file with the CSV's long description.")
	flag.StringVar(&o.icon, "icon", "manifests/olm/icon.svg", "SVG icon of the CSV.")
	flag.Parse()
	if o.version == "" {
		log.Fatal("--version is required")
	}
	if err := generate(os.Stdin, o); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Wrote the bundle of %s v%s to %s/ and %s\n", o.pkg, o.version, o.out, o.dockerfile)
}

package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Options say what to build and where.
type Options struct {
	Version, Commit, Date string
	// Platforms are os/arch pairs.
	Platforms []string
	// Out is the folder the archives, checksums.txt and the manifest go to.
	Out string
	// Root is the repository (cmd/csv-cleaner, LICENSE, README.md).
	Root string
	// URL is where an archive is downloaded from, with {version} and {archive}.
	URL string
}

// DefaultPlatforms are the platforms a release ships.
const DefaultPlatforms = "linux/amd64,linux/arm64,darwin/amd64,darwin/arm64,windows/amd64"

func main() {
	var o Options
	var platforms string
	flag.StringVar(&o.Version, "version", "0.1.0", "the version, without v")
	flag.StringVar(&o.Commit, "commit", "", "the commit built")
	flag.StringVar(&o.Date, "date", "", "the commit's date (RFC 3339, UTC): the binaries' build date and the archives' entries' time")
	flag.StringVar(&platforms, "platforms", DefaultPlatforms, "os/arch pairs, comma-separated")
	flag.StringVar(&o.Out, "out", "dist", "the folder to write to (emptied first)")
	flag.StringVar(&o.Root, "root", ".", "the repository")
	flag.StringVar(&o.URL, "url", "https://github.com/csv-cleaner/csv-cleaner/releases/download/v{version}/{archive}", "where an archive is downloaded from")
	flag.Parse()
	o.Platforms = strings.Split(platforms, ",")
	artifacts, err := Dist(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
	for _, a := range artifacts {
		fmt.Printf("%s  %d bytes  sha256 %s\n", filepath.Join(o.Out, a.Name), a.Size, a.Sha256)
	}
	fmt.Printf("%s\n%s\n", filepath.Join(o.Out, checksumsFile), filepath.Join(o.Out, manifestFile))
}

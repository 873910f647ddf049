// Command dist builds what a release of csv-cleaner ships besides its
// images (make dist): for each platform an archive of the binary and its
// kubectl plugin name (kubectl-csv_cleaner), the LICENSE and the README;
// checksums.txt (sha256, as sha256sum -c reads it); and csv-cleaner.yaml,
// the krew plugin manifest (krew.googlecontainertools.github.com/v1alpha2
// Plugin) whose platforms name each archive with its selector, URI and
// sha256, generated from the same build. The version, the commit and its
// date are stamped into every binary; the archives are reproducible (their
// entries sorted, dated at the commit, owned by root).
package main

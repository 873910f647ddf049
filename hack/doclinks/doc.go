// Package doclinks checks the project's Markdown: every relative link
// names a file that exists and, with a #fragment, a heading (or an
// explicit anchor) of that file, by GitHub's rule for heading anchors. Its
// test runs on README.md and docs/ with `make test`, so that a page moved
// or a heading renamed fails there rather than in a reader's browser.
//
// It reads files and reports; it never changes them, and it does not
// follow links that leave the repository (http, https, mailto).
package doclinks

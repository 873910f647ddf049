// Package arch holds csv-cleaner to its drawing: docs/architecture.md's
// mermaid flowchart is the one table of which package of csv-cleaner may
// import which. Its test fails an import the drawing does not draw, an
// arrow no code imports, and a depguard rule of .golangci.yml that allows
// other imports than the drawing's arrows (make lint enforces those rules
// file by file, this test keeps them the drawing's).
package arch

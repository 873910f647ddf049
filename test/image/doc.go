// Package image checks the Dockerfile without a Docker engine: it parses it
// with BuildKit's own parser, checks the shape of the image (multi-stage,
// distroless non-root base, static binary), and runs the build stage's
// commands on the files the build stage copies, as `docker build` would.
package image

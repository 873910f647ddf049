// Package bench measures csv-cleaner on the local control plane (etcd and
// kube-apiserver built into bin/), with csv-cleaner as its own process:
//
//   - uninstall throughput against the API server's own floor, a bare
//     client-go program doing DeleteCollection on an identical second set of
//     operands, with the same client QPS and burst, in the same run, with
//     the CPU time kube-apiserver, etcd and csv-cleaner spend per operand
//     and csv-cleaner's peak RSS during the uninstall;
//   - resume: a CSV deleted while csv-cleaner was stopped;
//   - peak RSS with many CSVs, most of them OLM's copies, and many
//     unrelated custom resources;
//   - idle cost: the requests csv-cleaner makes while nothing is deleted.
//
// Each figure is a ratio or a count from one run, so that the noise of a
// shared machine cancels out. `make bench` runs the full sizes and writes
// docs/benchmarks.{md,json,svg}; `make test` runs small sizes, so that the
// harness cannot rot, and checks what it measures, never a timing.
package bench

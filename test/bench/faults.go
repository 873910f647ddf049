package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/test/faultproxy"
)

// FaultRates are the faults of the benchmark's degraded run: 10 % of
// requests refused (500 "etcdserver: request timed out", 503 and 429 with
// Retry-After: 1, evenly), 5 % of DELETEs and PATCHes done with their reply
// lost (a 500 or a reset stream), and every watch cut 5 to 15 s after it
// opens. No delays: they would measure latency, not the handling of faults.
var FaultRates = faultproxy.Rates{Refused: 0.10, LostReply: 0.05, CutWatchAfter: [2]time.Duration{5 * time.Second, 15 * time.Second}}

// Faults is the throughput benchmark once more behind the fault proxy.
type Faults struct {
	Operands int
	// Uninstall: from the CSV's deletion to the CSV being gone, under FaultRates.
	Uninstall time.Duration
	// Unfaulted is the same run's time without faults (Throughput.Uninstall of the same size).
	Unfaulted time.Duration
	// Proxied is the same uninstall behind the same proxy with no faults:
	// what the proxy itself costs on the shared cores is not fault handling.
	Proxied time.Duration
	// Injected counts the faults the proxy injected, by kind.
	Injected map[faultproxy.Kind]int
	// Retries are csv-cleaner's requests retried in place
	// (csv_cleaner_client_retries_total), FailedAttempts its attempts that
	// failed all the same (csv_cleaner_failed_attempts_total).
	Retries, FailedAttempts float64
}

// Ratio is the uninstall's time under faults over its time behind the
// same proxy without (over its time without the proxy if that was not run).
func (f Faults) Ratio() float64 {
	if f.Proxied > 0 {
		return f.Uninstall.Seconds() / f.Proxied.Seconds()
	}
	return f.RatioUnproxied()
}

// RatioUnproxied is the uninstall's time under faults over its time without
// the proxy (the throughput benchmark's).
func (f Faults) RatioUnproxied() float64 { return f.Uninstall.Seconds() / f.Unfaulted.Seconds() }

// ProxyCost is the uninstall's time behind the proxy without faults over its
// time without the proxy.
func (f Faults) ProxyCost() float64 { return f.Proxied.Seconds() / f.Unfaulted.Seconds() }

// MeasureFaults runs the throughput benchmark's uninstall of n operands with
// csv-cleaner behind a fault proxy twice: without faults, then with
// FaultRates turned on when the CSV is deleted; unfaulted is the run
// without the proxy.
func (e *Env) MeasureFaults(ctx context.Context, n int, unfaulted Throughput) (Faults, error) {
	res := Faults{Operands: n, Unfaulted: unfaulted.Uninstall}
	proxy, kubeconfig, err := e.faultProxy("faults")
	if err != nil {
		return res, err
	}
	defer proxy.Close()
	cleaner, err := e.StartCleaner(ctx, "csv-cleaner-faults-"+strconv.Itoa(n), "--kubeconfig="+kubeconfig)
	if err != nil {
		return res, err
	}
	defer func() { _ = cleaner.Stop(30 * time.Second) }()
	clean, m0, err := e.throughputOn(ctx, cleaner, n, throughputRun{id: fmt.Sprintf("proxied%d", n)})
	if err != nil {
		return res, fmt.Errorf("behind the proxy without faults: %w", err)
	}
	res.Proxied = clean.Uninstall
	tp, m, err := e.throughputOn(ctx, cleaner, n, throughputRun{id: fmt.Sprintf("faults%d", n), onDelete: func() { proxy.SetRates(FaultRates) }})
	proxy.SetRates(faultproxy.Rates{})
	if err != nil {
		return res, err
	}
	res.Uninstall, res.Injected = tp.Uninstall, proxy.Injected()
	res.Retries = m.Sum("csv_cleaner_client_retries_total", nil) - m0.Sum("csv_cleaner_client_retries_total", nil)
	res.FailedAttempts = m.Sum("csv_cleaner_failed_attempts_total", nil) - m0.Sum("csv_cleaner_failed_attempts_total", nil)
	if err := proxy.Check(faultproxy.Refused500, faultproxy.Refused503, faultproxy.Refused429, faultproxy.LostReply500, faultproxy.LostReplyReset); err != nil {
		return res, err
	}
	return res, nil
}

func (f Faults) injectedTotal() int {
	n := 0
	for _, c := range f.Injected {
		n += c
	}
	return n
}

func (r Report) faultsWorkload() string {
	if r.Faults == nil {
		return "not run."
	}
	return fmt.Sprintf("the throughput benchmark's uninstall of %d operands once more, csv-cleaner talking to kube-apiserver through the project's fault proxy (`test/faultproxy`, an HTTPS reverse proxy on 127.0.0.1, seeded), which from the CSV's deletion on refuses 10 %% of requests (500 `etcdserver: request timed out`, 503, and 429 with `Retry-After: 1`, evenly), lets 5 %% of DELETEs and PATCHes happen and then answers 500 or resets the stream, and cuts every watch 5 to 15 s after it opens. It runs twice on one csv-cleaner behind the proxy, first without faults (`faults_proxied_seconds`), then with them: `faults_ratio_to_proxied` divides the time under faults by the time behind the proxy without (the goal: what the proxy itself costs on the shared cores, `faults_proxy_cost`, is not fault handling), `faults_ratio_to_unfaulted` by the same size's `uninstall_seconds` without the proxy; `faults_requests_retried` is csv-cleaner's `csv_cleaner_client_retries_total` (requests retried in place), `faults_failed_attempts` its `csv_cleaner_failed_attempts_total` (attempts that failed all the same and waited the capped backoff).", r.Faults.Operands)
}

func (r Report) faultsFinding() string {
	f := r.Faults
	if f == nil {
		return "Not run."
	}
	return fmt.Sprintf("%d operands took %.1f s under faults against %.1f s behind the same proxy without faults (%.2f times; the goal is 1.5) and %.1f s without the proxy (%.2f times; the proxy alone: %.2f times): the proxy injected %d faults (%v), csv-cleaner retried %.0f requests in place and %.0f attempts failed all the same. Before in-place retries one failed request failed the whole attempt, and controller-runtime's backoff, doubling to 1,000 s, left uninstalls held for minutes after the API server had recovered; the wait between failed attempts is now capped at %s. What the retries cost is mostly the 429s: client-go waits out their `Retry-After` (1 s) before it tries again, and while each delete held one of the %d slots for its whole call, those waits idled the slots: 10,000 operands took 39.2 s against 14.6 s (2.68 times, measured by hand on 2026-11-24). A request now holds its slot only while the API server has it (the transport takes it), and four times as many workers as slots keep the slots busy while some wait.",
		f.Operands, f.Uninstall.Seconds(), f.Proxied.Seconds(), f.Ratio(), f.Unfaulted.Seconds(), f.RatioUnproxied(), f.ProxyCost(), f.injectedTotal(), f.Injected, f.Retries, f.FailedAttempts, cleanup.MaxRetryDelay, cleanup.DefaultDeleteWorkers)
}

// faultProxy starts a fault proxy (seed 26) in front of the API server with
// csv-cleaner's identity, and writes a kubeconfig for it.
func (e *Env) faultProxy(name string) (*faultproxy.Proxy, string, error) {
	proxy, err := faultproxy.Start(e.CleanerID.Config, 26)
	if err != nil {
		return nil, "", err
	}
	kubeconfig := filepath.Join(e.LogDir, name+".kubeconfig")
	if err := proxy.WriteKubeconfig(kubeconfig); err != nil {
		proxy.Close()
		return nil, "", err
	}
	return proxy, kubeconfig, nil
}

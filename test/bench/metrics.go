package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
)

// Families is one scrape of a metrics endpoint.
type Families map[string]*dto.MetricFamily

// Sum adds up the samples of a counter or gauge whose labels match all of want.
func (f Families) Sum(name string, want map[string]string) float64 {
	mf, ok := f[name]
	if !ok {
		return 0
	}
	total := 0.0
	for _, m := range mf.Metric {
		if !matches(m, want) {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		}
	}
	return total
}

// SumBy adds up the samples by the value of one label.
func (f Families) SumBy(name, label string) map[string]float64 {
	return f.SumByLabels(name, label)
}

// SumByLabels adds up the samples by the values of labels, joined with a
// space (a sample without one of them counts under its empty value).
func (f Families) SumByLabels(name string, labels ...string) map[string]float64 {
	out := map[string]float64{}
	mf, ok := f[name]
	if !ok {
		return out
	}
	for _, m := range mf.Metric {
		v := 0.0
		switch {
		case m.Counter != nil:
			v = m.Counter.GetValue()
		case m.Gauge != nil:
			v = m.Gauge.GetValue()
		}
		values := make([]string, len(labels))
		for i, want := range labels {
			for _, l := range m.Label {
				if l.GetName() == want {
					values[i] = l.GetValue()
				}
			}
		}
		out[strings.Join(values, " ")] += v
	}
	return out
}

func matches(m *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		found := false
		for _, l := range m.Label {
			if l.GetName() == k && l.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func parse(raw []byte) (Families, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	f, err := p.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	return f, nil
}

// ScrapeCounted scrapes csv-cleaner's /metrics until the counter name with
// labels has reached want, for up to 10 s: csv-cleaner raises a counter
// right after it writes what it counts, so a reader that saw the write may
// scrape before the raise. It returns the last scrape; a counter past want
// is an error.
func (c *Cleaner) ScrapeCounted(ctx context.Context, name string, labels map[string]string, want float64) (Families, error) {
	var m Families
	err := controlplane.WaitFor(ctx, 10*time.Second, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		var err error
		if m, err = c.Scrape(ctx); err != nil {
			return false, err
		}
		return m.Sum(name, labels) >= want, nil
	})
	if got := m.Sum(name, labels); err != nil || got != want {
		sel := make([]string, 0, len(labels))
		for k, v := range labels {
			sel = append(sel, k+"="+v)
		}
		slices.Sort(sel)
		return m, errors.Join(fmt.Errorf("%s{%s} is %.0f, want %.0f", name, strings.Join(sel, ","), got, want), err)
	}
	return m, nil
}

// Scrape reads csv-cleaner's /metrics.
func (c *Cleaner) Scrape(ctx context.Context) (Families, error) {
	_, body, err := controlplane.HTTPGet(ctx, "http://"+c.Metrics+"/metrics")
	if err != nil {
		return nil, fmt.Errorf("scraping csv-cleaner's metrics: %w", err)
	}
	return parse([]byte(body))
}

// PeakRSSMiB is the process's peak resident set size (VmHWM), in MiB.
func (c *Cleaner) PeakRSSMiB() (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", c.Pid()))
	if err != nil {
		return 0, fmt.Errorf("reading csv-cleaner's memory: %w", err)
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("parsing VmHWM %q: %w", rest, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", c.Pid())
}

package testcluster

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Samples are the series of one scrape, by SeriesKey: counters and
// gauges by their name, a histogram as name_count and name_sum.
type Samples map[string]float64

// SeriesKey names a series: the metric name and its labels, given as
// name, value pairs, sorted ("pbs_server_jobs{queue=workq,state=queued}").
func SeriesKey(name string, labels ...string) string {
	if len(labels) == 0 {
		return name
	}
	pairs := make([]string, 0, len(labels)/2)
	for i := 0; i+1 < len(labels); i += 2 {
		pairs = append(pairs, labels[i]+"="+labels[i+1])
	}
	sort.Strings(pairs)
	return name + "{" + strings.Join(pairs, ",") + "}"
}

// Get is the value of a series (name and label pairs) and whether the
// scrape had it.
func (s Samples) Get(name string, labels ...string) (float64, bool) {
	v, ok := s[SeriesKey(name, labels...)]
	return v, ok
}

// Has reports whether any series of the family name (or, for a
// histogram, name_count) is there.
func (s Samples) Has(name string) bool {
	for k := range s {
		base, _, _ := strings.Cut(k, "{")
		if base == name || base == name+"_count" {
			return true
		}
	}
	return false
}

// Scrape GETs url (a daemon's /metrics) and parses the text format.
func Scrape(url string) (Samples, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	return ParseMetrics(resp.Body)
}

// MustScrape is Scrape, failing the test when it fails.
func MustScrape(t TB, url string) Samples {
	t.Helper()
	s, err := Scrape(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ParseMetrics reads Prometheus's text format into Samples.
func ParseMetrics(r io.Reader) (Samples, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	out := Samples{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName(), l.GetValue())
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[SeriesKey(name, labels...)] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[SeriesKey(name, labels...)] = m.GetGauge().GetValue()
			case dto.MetricType_UNTYPED:
				out[SeriesKey(name, labels...)] = m.GetUntyped().GetValue()
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				out[SeriesKey(name+"_count", labels...)] = float64(h.GetSampleCount())
				out[SeriesKey(name+"_sum", labels...)] = h.GetSampleSum()
				for _, b := range h.GetBucket() {
					le := strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)
					out[SeriesKey(name+"_bucket", append(labels, "le", le)...)] = float64(b.GetCumulativeCount())
				}
			case dto.MetricType_SUMMARY:
				s := m.GetSummary()
				out[SeriesKey(name+"_count", labels...)] = float64(s.GetSampleCount())
				out[SeriesKey(name+"_sum", labels...)] = s.GetSampleSum()
			}
		}
	}
	return out, nil
}

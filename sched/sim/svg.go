package sim

import (
	"fmt"
	"html"
	"io"
	"sort"
	"strings"
)

// Plots of a replay as SVG documents a browser opens: utilization and
// queue length over time, the distribution of waits, and the average wait
// per user. They are plain SVG (no script, no external resource).

const (
	plotW, plotH         = 720, 300
	marginL, marginB     = 60, 40
	marginT, marginR     = 30, 20
	innerW, innerH       = plotW - marginL - marginR, plotH - marginT - marginB
	timeSeriesBins       = 400
	maxUserBars          = 20
	svgHeader            = `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">` + "\n"
	svgAxisStyle         = `stroke="#333" stroke-width="1"`
	svgSeriesStyle       = `fill="none" stroke="#1f77b4" stroke-width="1.5"`
	svgBarStyle          = `fill="#1f77b4"`
	svgGridStyle         = `stroke="#ddd" stroke-width="1"`
	svgTitleY, svgLabelX = 18, 10
)

// Plots are the SVG documents of a replay, by file name, drawn from what
// its Stats accumulated.
func Plots(s *Stats) map[string]string {
	first, last := s.span()
	busy := s.busy.averages(first, last, timeSeriesBins)
	for i := range busy {
		busy[i] /= float64(max(s.procs, 1))
	}
	return map[string]string{
		"utilization.svg": series("Utilization over time (busy processors / machine)", busy, 1),
		"queue.svg":       series("Queue length over time (jobs waiting)", s.queued.averages(first, last, timeSeriesBins), 0),
		"waits.svg":       bars("Distribution of waits", s.waitHistogram()),
		"users.svg":       bars("Average wait per user (hours), the 20 users with most jobs", s.userWaits()),
		"index.html":      index(),
	}
}

func index() string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><meta charset=\"utf-8\"><title>pbs_simulate</title></head><body>\n")
	for _, f := range []string{"utilization.svg", "queue.svg", "waits.svg", "users.svg"} {
		fmt.Fprintf(&b, "<p><img src=%q alt=%q></p>\n", f, f)
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// span is the replay's time range: first submit to last end.
func (s *Stats) span() (int64, int64) {
	first := s.first
	if s.jobs+s.notStarted == 0 {
		first = -1
	}
	return first, max(s.last, first+1)
}

type bar struct {
	label string
	value float64
}

// waitBuckets are the bars of the wait distribution: a wait of 0, then
// up to (and including) each bound, then a week or more.
var waitBuckets = [...]struct {
	label string
	upTo  int64
}{{"0", 0}, {"<1m", 60}, {"<10m", 600}, {"<1h", 3600}, {"<6h", 6 * 3600}, {"<1d", 86400}, {"<1w", 7 * 86400}, {">=1w", -1}}

// waitBucket is the bar a wait falls in.
func waitBucket(w int64) int {
	for i, b := range waitBuckets {
		if b.upTo < 0 || w <= b.upTo && (i == 0 || w > 0) {
			return i
		}
	}
	return len(waitBuckets) - 1
}

func (s *Stats) waitHistogram() []bar {
	out := make([]bar, len(waitBuckets))
	for i, b := range waitBuckets {
		out[i] = bar{b.label, s.waitCounts[i]}
	}
	return out
}

func (s *Stats) userWaits() []bar {
	gs := s.Metrics().Users
	sort.SliceStable(gs, func(a, b int) bool { return gs[a].Jobs > gs[b].Jobs })
	if len(gs) > maxUserBars {
		gs = gs[:maxUserBars]
	}
	out := make([]bar, len(gs))
	for i, g := range gs {
		out[i] = bar{g.Name, g.AvgWait / 3600}
	}
	return out
}

// series draws values as a line over the time axis; top is the fixed
// maximum of the y axis (0: the data's).
func series(title string, values []float64, top float64) string {
	if top <= 0 {
		for _, v := range values {
			top = max(top, v)
		}
		top = max(top, 1)
	}
	var b strings.Builder
	frame(&b, title, top)
	var pts []string
	for i, v := range values {
		x := marginL + float64(i)*innerW/float64(max(len(values)-1, 1))
		y := marginT + innerH - v/top*innerH
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
	}
	fmt.Fprintf(&b, `<polyline %s points="%s"/>`+"\n", svgSeriesStyle, strings.Join(pts, " "))
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">time (first submit to last end)</text>`+"\n", marginL+innerW/2, plotH-8)
	b.WriteString("</svg>\n")
	return b.String()
}

func bars(title string, bs []bar) string {
	top := 1.0
	for _, x := range bs {
		top = max(top, x.value)
	}
	var b strings.Builder
	frame(&b, title, top)
	w := float64(innerW) / float64(max(len(bs), 1))
	for i, x := range bs {
		h := x.value / top * innerH
		fmt.Fprintf(&b, `<rect %s x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %.4g</title></rect>`+"\n",
			svgBarStyle, marginL+float64(i)*w+2, marginT+innerH-h, w-4, h, html.EscapeString(x.label), x.value)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", marginL+float64(i)*w+w/2, marginT+innerH+14, html.EscapeString(x.label))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// frame writes the document head, the title, the axes and a scale.
func frame(b *strings.Builder, title string, top float64) {
	fmt.Fprintf(b, svgHeader, plotW, plotH)
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="white"/>`+"\n", plotW, plotH)
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="13">%s</text>`+"\n", svgLabelX, svgTitleY, html.EscapeString(title))
	for k := 0; k <= 4; k++ {
		y := marginT + innerH - k*innerH/4
		fmt.Fprintf(b, `<line %s x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", svgGridStyle, marginL, y, marginL+innerW, y)
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", marginL-6, y+4, tick(top*float64(k)/4))
	}
	fmt.Fprintf(b, `<line %s x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", svgAxisStyle, marginL, marginT, marginL, marginT+innerH)
	fmt.Fprintf(b, `<line %s x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", svgAxisStyle, marginL, marginT+innerH, marginL+innerW, marginT+innerH)
}

// WritePlots writes each plot with write(name, contents) (the caller
// owns the files).
func WritePlots(s *Stats, write func(name string, r io.Reader) error) error {
	plots := Plots(s)
	names := make([]string, 0, len(plots))
	for n := range plots {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := write(n, strings.NewReader(plots[n])); err != nil {
			return err
		}
	}
	return nil
}

// tick formats an axis value: whole numbers from 10 up, two digits below.
func tick(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

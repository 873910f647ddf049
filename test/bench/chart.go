package bench

import (
	"fmt"
	"strings"
)

// SVG charts the uninstall's growth curve against the floor's: seconds
// over operands.
func (r Report) SVG() string {
	const w, h, left, right, top, bottom = 640.0, 360.0, 60.0, 20.0, 30.0, 50.0
	maxX, maxY := 1.0, 1.0
	for _, t := range r.Throughput {
		maxX = max(maxX, float64(t.Operands))
		maxY = max(maxY, t.Uninstall.Seconds(), t.Floor.Seconds(), t.Collection.Seconds())
	}
	maxY *= 1.1
	x := func(v float64) float64 { return left + v/maxX*(w-left-right) }
	y := func(v float64) float64 { return h - bottom - v/maxY*(h-top-bottom) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="18" font-size="14">Uninstall time against the API server's floor (3 CRDs, 100 namespaces)</text>`+"\n", left)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", left, y(0), w-right, y(0))
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", left, y(0), left, top)
	for i := 0; i <= 4; i++ {
		v := maxY * float64(i) / 4
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="end">%.0f s</text>`+"\n", left-6, y(v)+4, v)
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#ddd"/>`+"\n", left, y(v), w-right, y(v))
	}
	for _, t := range r.Throughput {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">%s</text>`+"\n", x(float64(t.Operands)), h-bottom+18, size(t.Operands))
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">operands</text>`+"\n", (left+w-right)/2, h-12)
	series := []struct {
		name, color string
		v           func(Throughput) float64
	}{
		{"csv-cleaner (CSV deleted → CSV gone)", "#1f6feb", func(t Throughput) float64 { return t.Uninstall.Seconds() }},
		{"per-object floor (UID-guarded deletes, until all gone)", "#999999", func(t Throughput) float64 { return t.Floor.Seconds() }},
		{"DeleteCollection (for information)", "#cccccc", func(t Throughput) float64 { return t.Collection.Seconds() }},
	}
	for i, s := range series {
		var pts []string
		for _, t := range r.Throughput {
			px, py := x(float64(t.Operands)), y(s.v(t))
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px, py))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", px, py, s.color)
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), s.color)
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="12" height="3" fill="%s"/><text x="%.0f" y="%.0f">%s</text>`+"\n",
			left+12, top+10+float64(i)*16, s.color, left+30, top+14+float64(i)*16, s.name)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

package logview

import (
	"fmt"
	"strings"
	"testing"
)

// benchLines are realistic 80-byte log lines without secrets.
func benchLines(n int) []string {
	out := make([]string, n)
	for i := range out {
		l := fmt.Sprintf("2026-11-22T10:04:05.%03dZ INFO GET /api/v1/items/%06d status=200 took=%dms", i%1000, i, i%97)
		out[i] = l + strings.Repeat(" ", max(0, 80-len(l)))
	}
	return out
}

// BenchmarkIngest measures lines/s into the log view through the real path:
// the read Cmd takes a batch from the source, sanitises and redacts it, and
// Update appends it to the ring (bench/README.md P5: ≥ 100,000 lines/s). One op is one
// batch of 1,000 lines.
func BenchmarkIngest(b *testing.B) {
	for _, tc := range []struct {
		name   string
		search bool
	}{{"plain", false}, {"search-active", true}} {
		b.Run(tc.name, func(b *testing.B) {
			const batch = 1000
			lines := benchLines(batch)
			h := newHarness(b, 160, 48, Options{})
			if tc.search {
				h.m.runSearch("items/0000")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				h.src.ch <- lines
				msg := h.cmd()
				h.m, h.cmd = h.m.Update(msg)
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}

// BenchmarkView measures one frame with 10,000 lines buffered at 160×48.
func BenchmarkView(b *testing.B) {
	for _, tc := range []struct {
		name         string
		wrap, search bool
	}{{"follow", false, false}, {"wrap", true, false}, {"search", false, true}, {"wrap+search", true, true}} {
		b.Run(tc.name, func(b *testing.B) {
			h := newHarness(b, 160, 48, Options{Styles: DefaultStyles()})
			lines := benchLines(DefaultCapacity)
			for i := 0; i < len(lines); i += 7 {
				lines[i] += strings.Repeat(" long tail", 30) // some lines wrap
			}
			h.feed(lines)
			if tc.wrap {
				h.keys("w")
			}
			if tc.search {
				h.m.runSearch("status")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				_ = h.m.View()
			}
		})
	}
}

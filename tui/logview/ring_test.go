package logview

import (
	"strconv"
	"testing"
)

func ringLines(r *ring) []string {
	var out []string
	for i := r.first(); i < r.end(); i++ {
		l, ok := r.at(i)
		if !ok {
			panic("missing line " + strconv.Itoa(i))
		}
		out = append(out, l)
	}
	return out
}

func seq(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(from + i)
	}
	return out
}

func TestRing(t *testing.T) {
	tests := []struct {
		name    string
		cap     int
		batches []int // sizes pushed in order
	}{
		{"empty", 5, nil},
		{"under capacity", 5, []int{3}},
		{"exactly full", 5, []int{5}},
		{"wraparound by ones", 5, []int{1, 1, 1, 1, 1, 1, 1, 1}},
		{"wraparound in chunks", 5, []int{3, 3, 3, 3}},
		{"batch larger than capacity", 5, []int{2, 12, 1}},
		{"capacity one", 1, []int{1, 3, 1}},
		{"zero capacity treated as one", 0, []int{4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRing(tc.cap)
			total := 0
			for _, n := range tc.batches {
				r.push(seq(total, n))
				total += n
			}
			c := max(tc.cap, 1)
			want := min(total, c)
			if r.len() != want || r.end() != total || r.first() != total-want {
				t.Fatalf("len=%d first=%d end=%d, want len=%d end=%d", r.len(), r.first(), r.end(), want, total)
			}
			got := ringLines(r)
			for k, l := range got {
				if l != strconv.Itoa(total-want+k) {
					t.Fatalf("line %d = %q, want %d (all: %v)", k, l, total-want+k, got)
				}
			}
			if _, ok := r.at(r.first() - 1); ok && r.first() > 0 {
				t.Error("evicted line still readable")
			}
			if _, ok := r.at(r.end()); ok {
				t.Error("line past the end readable")
			}
		})
	}
}

func TestRing100kKeepsLast10k(t *testing.T) {
	r := newRing(DefaultCapacity)
	n := 0
	for size := 1; n < 100_000; size = size%997 + 1 {
		size = min(size, 100_000-n)
		r.push(seq(n, size))
		n += size
	}
	if r.len() != 10_000 || r.end() != 100_000 {
		t.Fatalf("len=%d end=%d", r.len(), r.end())
	}
	for k, l := range ringLines(r) {
		if l != strconv.Itoa(90_000+k) {
			t.Fatalf("line %d = %q", k, l)
		}
	}
}

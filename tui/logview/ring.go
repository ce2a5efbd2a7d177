package logview

// ring is a fixed-capacity buffer of the most recent lines. Lines are
// addressed by their absolute sequence number (0 = the first line ever
// pushed), so positions held by the view stay meaningful while old lines are
// evicted: a line is present when first() <= i < total.
//
// Memory is bounded by the capacity (README "The console": the last 10,000 lines); the
// backing array is allocated once.
type ring struct {
	buf   []string
	head  int // slot of the oldest line
	n     int // lines held
	total int // lines ever pushed
}

func newRing(capacity int) *ring {
	if capacity < 1 {
		capacity = 1
	}
	return &ring{buf: make([]string, capacity)}
}

// capacity is the most lines held at once.
func (r *ring) capacity() int { return len(r.buf) }

// len is the number of lines held.
func (r *ring) len() int { return r.n }

// first is the sequence number of the oldest line held (== total when empty).
func (r *ring) first() int { return r.total - r.n }

// end is one past the sequence number of the newest line (lines ever pushed).
func (r *ring) end() int { return r.total }

// push appends lines in order, evicting the oldest ones beyond capacity. When
// len(lines) exceeds the capacity only its last capacity lines are copied.
func (r *ring) push(lines []string) {
	c := len(r.buf)
	r.total += len(lines)
	if len(lines) >= c {
		copy(r.buf, lines[len(lines)-c:])
		r.head, r.n = 0, c
		return
	}
	tail := (r.head + r.n) % c // slot of the next write
	k := copy(r.buf[tail:], lines)
	copy(r.buf, lines[k:])
	r.n += len(lines)
	if r.n > c {
		r.head = (r.head + r.n - c) % c
		r.n = c
	}
}

// at returns line i (a sequence number); ok is false when it is not held.
func (r *ring) at(i int) (string, bool) {
	if i < r.first() || i >= r.total {
		return "", false
	}
	return r.buf[(r.head+i-r.first())%len(r.buf)], true
}

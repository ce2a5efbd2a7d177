package core

import (
	"errors"
	"os/user"
	"strings"
	"testing"
)

func TestOperatorActor(t *testing.T) {
	host := func() (string, error) { return "box", nil }
	noUser := func() (*user.User, error) { return nil, errors.New("no passwd") }
	osUser := func() (*user.User, error) { return &user.User{Username: "osname"}, nil }
	for _, c := range []struct {
		env     map[string]string
		current func() (*user.User, error)
		want    Actor
	}{
		{map[string]string{"USER": "alice"}, noUser, "alice@box"},
		{map[string]string{"LOGNAME": "bob"}, noUser, "bob@box"},
		{map[string]string{}, osUser, "osname@box"},
		{map[string]string{}, noUser, "unknown@box"},
		{map[string]string{"USER": "alice", "SSH_CONNECTION": "203.0.113.7 52144 10.0.0.2 22"}, noUser, "alice@box from 203.0.113.7"},
		{map[string]string{"USER": "alice", "SSH_CONNECTION": "2001:db8::1 52144 2001:db8::2 22"}, noUser, "alice@box from 2001:db8::1"},
	} {
		got := operatorActor(func(k string) string { return c.env[k] }, host, c.current)
		if got != c.want {
			t.Errorf("%v: %q, want %q", c.env, got, c.want)
		}
	}
	if got := operatorActor(func(string) string { return "u" }, func() (string, error) { return "", errors.New("x") }, noUser); got != "u@localhost from u" {
		t.Errorf("hostname failure: %q", got)
	}
}

func TestIDs(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		s := NewShortID()
		if len(s) != 12 || seen[s] {
			t.Fatalf("short id %q", s)
		}
		for _, r := range s {
			if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
				t.Fatalf("short id %q is not lowercase hex", s)
			}
		}
		seen[s] = true
	}
	a, b := NewTaskID(), NewTaskID()
	if len(a) != TaskIDLen || TaskIDLen > 12 || a == b || strings.Trim(a, taskIDAlphabet) != "" {
		t.Fatalf("task ids %q %q", a, b)
	}
}

// TestTaskIDPrefixesUnique draws 1,000,000 task ids, the docs/contract.md "Entities and statuses" registry
// size: their 8-character prefixes collide about as often as 40 random bits
// predict (n²/2⁴¹ ≈ 0.45 pairs), where UUIDv7's timestamp-led prefixes
// would collide for nearly every id. CreateTask then redraws the rare clash
// (TestNewUniqueTaskIDRedraws), so a created id's prefix is unique.
func TestTaskIDPrefixesUnique(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000,000 ids")
	}
	const n = 1_000_000
	seen := make(map[string]struct{}, n)
	clashes := 0
	for range n {
		p := NewTaskID()[:8]
		if _, ok := seen[p]; ok {
			clashes++
		}
		seen[p] = struct{}{}
	}
	// P(≥ 10 clashes) with a mean of 0.45 is below 1e-11.
	if clashes >= 10 {
		t.Fatalf("%d of %d ids share an 8-character prefix with an earlier one", clashes, n)
	}
}

// prefixTx is a Tx whose ResolveID knows a set of task ids.
type prefixTx struct {
	Tx
	ids []string
	err error
}

func (p *prefixTx) ResolveID(entity, prefix string) (string, error) {
	if p.err != nil {
		return "", p.err
	}
	var m []string
	for _, id := range p.ids {
		if strings.HasPrefix(id, prefix) {
			m = append(m, id)
		}
	}
	switch len(m) {
	case 0:
		return "", NotFoundf("no %s matches id prefix %q", entity, prefix)
	case 1:
		return m[0], nil
	}
	return "", &AmbiguousError{Entity: entity, Prefix: prefix, Matches: m, Count: len(m)}
}

func TestNewUniqueTaskIDRedraws(t *testing.T) {
	seq := func(ids ...string) func() string {
		return func() string { id := ids[0]; ids = ids[1:]; return id }
	}
	tx := &prefixTx{ids: []string{"aaaaaaaa0000", "bbbbbbbb0000", "bbbbbbbb1111"}}
	got, err := newUniqueTaskID(tx, seq("aaaaaaaa9999", "bbbbbbbb9999", "cccccccc0000"))
	if err != nil || got != "cccccccc0000" {
		t.Fatalf("got %q, %v; want the third draw, the first with a free 8-character prefix", got, err)
	}
	always := func() string { return "aaaaaaaa1234" }
	if _, err := newUniqueTaskID(tx, always); err == nil || !strings.Contains(err.Error(), "no free task id") {
		t.Fatalf("endless clashes: %v", err)
	}
	broken := &prefixTx{err: ErrBusy}
	if _, err := newUniqueTaskID(broken, NewTaskID); !errors.Is(err, ErrBusy) {
		t.Fatalf("store error: %v, want it wrapped", err)
	}
}

package core

import (
	"errors"
	"os/user"
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
	if len(a) != 36 || a[14] != '7' || a == b {
		t.Fatalf("task ids %q %q", a, b)
	}
}

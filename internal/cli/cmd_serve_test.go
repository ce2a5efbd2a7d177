package cli

import (
	"errors"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/tui"
)

// The console's attention: on by default, --attention narrows it, --quiet
// and CLAWPIT_QUIET=1 silence it (a bad --attention is refused even then).
func TestConsoleAttention(t *testing.T) {
	all := tui.Attention{Approvals: true, Failures: true}
	cases := []struct {
		name  string
		args  []string
		quiet string
		want  tui.Attention
		err   bool
	}{
		{name: "default", want: all},
		{name: "approvals only", args: []string{"--attention", "approvals"}, want: tui.Attention{Approvals: true}},
		{name: "none", args: []string{"--attention", "none"}},
		{name: "--quiet", args: []string{"--quiet"}},
		{name: "CLAWPIT_QUIET=1", quiet: "1"},
		{name: "CLAWPIT_QUIET=0", quiet: "0", want: all},
		{name: "bad", args: []string{"--attention", "bells"}, err: true},
		{name: "bad even when quiet", args: []string{"--quiet", "--attention", "bells"}, err: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := &app{th: core.DefaultThresholds()}
			root := newRootCmd(a)
			if err := root.ParseFlags(c.args); err != nil {
				t.Fatal(err)
			}
			s, err := resolveConsole(root, a, nil, func(k string) string {
				if k == "CLAWPIT_QUIET" {
					return c.quiet
				}
				return ""
			})
			if c.err {
				if !errors.Is(err, core.ErrInvalid) {
					t.Fatalf("err = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil || s.attention != c.want {
				t.Fatalf("attention %+v, err %v; want %+v", s.attention, err, c.want)
			}
		})
	}
}

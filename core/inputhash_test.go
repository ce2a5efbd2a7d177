package core_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

func TestCanonicalJSON(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, `null`},
		{` null `, `null`},
		{`{"command":"ls"}`, `{"command":"ls"}`},
		{"{ \"b\" : 1 ,\n \"a\":[ 1.0 , 1e2, -0 ] }", `{"a":[1.0,1e2,-0],"b":1}`},
		{`{"z":{"y":2,"x":1},"a":"<&>"}`, `{"a":"<&>","z":{"x":1,"y":2}}`},
		{`{"s":"\u0041\n\/"}`, `{"s":"A\n/"}`},
		{`{"k":1,"k":2}`, `{"k":2}`},
		{`{"é":1,"e":2,"E":3}`, `{"E":3,"e":2,"é":1}`},
		{`12345678901234567890123`, `12345678901234567890123`},
	} {
		got, err := core.CanonicalJSON([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("CanonicalJSON(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{`{`, `{"a":1} {"b":2}`, `{"a":1}x`, `nul`, `{"a":01}`} {
		if _, err := core.CanonicalJSON([]byte(bad)); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("CanonicalJSON(%q): %v, want invalid", bad, err)
		}
	}
}

func TestCanonicalInputHash(t *testing.T) {
	h := func(s string) string {
		t.Helper()
		got, err := core.CanonicalInputHash([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	ls := h(`{"command":"ls","description":"list"}`)
	if len(ls) != 64 {
		t.Fatalf("hash %q is not 64 hex digits", ls)
	}
	for _, c := range []struct {
		in   string
		same bool
	}{
		{"{ \"description\": \"list\",\n \"command\" : \"ls\" }", true},
		{`{"command":"\u006cs","description":"list"}`, true},
		{`{"command":"ls ","description":"list"}`, false},
		{`{"command":"ls","description":"list","timeout":1}`, false},
		{`{"command":"ls"}`, false},
		{`{"command":["ls"],"description":"list"}`, false},
		{`{"command":"ls","description":"List"}`, false},
	} {
		if got := h(c.in) == ls; got != c.same {
			t.Errorf("hash of %q equal to the original's: %v, want %v", c.in, got, c.same)
		}
	}
	if h(`{"n":1}`) == h(`{"n":1.0}`) {
		t.Error("numbers are kept as given: 1 and 1.0 must hash apart")
	}
}

// FuzzCanonicalJSON: the canonical form is valid JSON of the same value,
// canonical itself (a fixed point), and unchanged by re-spacing the input.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{"command":"ls"}`, `{"b":[1,2.50,{"c":null}],"a":"x\u00e9"}`, `[]`, `"\ud800"`,
		`{"k":1,"k":2}`, `1e400`, `{"file_path":"/etc/passwd","content":"root::0:0::/root:/bin/sh\n"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := core.CanonicalJSON(raw)
		if err != nil {
			return
		}
		if !json.Valid(c) {
			t.Fatalf("canonical form %q of %q is not JSON", c, raw)
		}
		again, err := core.CanonicalJSON(c)
		if err != nil || !bytes.Equal(again, c) {
			t.Fatalf("not a fixed point: %q → %q (%v)", c, again, err)
		}
		var spaced bytes.Buffer
		if json.Indent(&spaced, raw, " ", "\t") == nil {
			if s, err := core.CanonicalJSON(spaced.Bytes()); err != nil || !bytes.Equal(s, c) {
				t.Fatalf("re-spacing changed the canonical form: %q → %q, want %q (%v)", spaced.Bytes(), s, c, err)
			}
		}
	})
}

// TestToolCallReplayBinding: a recorded decision answers only the same
// tool call: same tool_use_id, session, tool and input hash. Anything else
// is a new pending approval; an approval recorded without a hash answers
// nothing.
func TestToolCallReplayBinding(t *testing.T) {
	f := registrytest.New(t)
	f.Session("s1")
	base := core.NewApproval{Session: "s1", Tool: "Bash", Command: "ls", ToolUseID: "toolu_A", InputHash: "h-ls"}
	first, err := f.Reg.RequestApproval(f.Ctx, base, core.ActorRuntime)
	f.Must(err)
	_, _, _, err = f.Reg.ApproveApproval(f.Ctx, first.ID, core.ScopeOnce, "op@host")
	f.Must(err)
	legacy, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "s1", Tool: "Bash", Command: "pwd", ToolUseID: "toolu_L"}, core.ActorRuntime)
	f.Must(err)
	_, _, _, err = f.Reg.ApproveApproval(f.Ctx, legacy.ID, core.ScopeOnce, "op@host")
	f.Must(err)

	for _, c := range []struct {
		name string
		edit func(*core.NewApproval)
		same bool
	}{
		{"the same call", func(*core.NewApproval) {}, true},
		{"another session", func(n *core.NewApproval) { n.Session = "s2" }, false},
		{"another tool", func(n *core.NewApproval) { n.Tool = "Write" }, false},
		{"another input", func(n *core.NewApproval) { n.InputHash = "h-rm"; n.Command = "rm -rf ~" }, false},
		{"no input hash", func(n *core.NewApproval) { n.InputHash = "" }, false},
		{"everything else", func(n *core.NewApproval) {
			n.Session, n.Tool, n.Command, n.InputHash = "s2", "Write", "/etc/passwd", "h-pw"
		}, false},
		{"a legacy approval's id, same everything", func(n *core.NewApproval) {
			n.ToolUseID, n.Command, n.InputHash = "toolu_L", "pwd", ""
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			na := base
			c.edit(&na)
			got, err := f.Reg.RequestApproval(f.Ctx, na, core.ActorRuntime)
			f.Must(err)
			if c.same {
				if got.ID != first.ID || got.Status != core.ApprovalApproved {
					t.Fatalf("the same call: %+v, want approval %s as decided", got, first.ID)
				}
				return
			}
			if got.ID == first.ID || got.ID == legacy.ID || got.Status != core.ApprovalPending ||
				got.Session != na.Session || got.Tool != na.Tool || got.InputHash != na.InputHash {
				t.Fatalf("%s: %+v, want a new pending approval of that call", c.name, got)
			}
			// The new call, asked again, is answered from its own approval.
			if na.InputHash != "" {
				again, err := f.Reg.RequestApproval(f.Ctx, na, core.ActorRuntime)
				if err != nil || again.ID != got.ID {
					t.Fatalf("%s again: %+v, %v; want %s", c.name, again, err, got.ID)
				}
			}
		})
	}
}

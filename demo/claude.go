package demo

// The "Claude Code session" story: a scripted Claude Code session driven
// through `clawpit hook` — this binary, run as Claude Code runs its hooks,
// with the payloads Claude Code sends on stdin (Claude Code hooks reference)
// — so the console shows a real adapter session live: the session, a
// sub-agent run with its task, tool calls waiting in Approvals (the hook
// process blocks until someone decides), a permission notification linked to
// its approval in Alerts, and the session closing at the end. The operator
// decides at the console; an approval left alone is decided by the simulated
// operator after 40–80 s.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/google/uuid"
)

// claudeApprovalTimeout is the demo hooks' --approval-timeout.
const claudeApprovalTimeout = 3 * time.Minute

// hookProcs tracks the gated hook processes still waiting, so Stop can end them.
type hookProcs struct {
	mu   sync.Mutex
	cmds map[*exec.Cmd]bool
	wg   sync.WaitGroup
}

// stop kills every waiting hook process and waits for them.
func (h *hookProcs) stop() {
	h.mu.Lock()
	for c := range h.cmds {
		if c.Process != nil {
			c.Process.Kill()
		}
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// gatedCall is one PreToolUse hook waiting in the background.
type gatedCall struct {
	toolUseID string
	asked     time.Time // virtual time of the request
	mu        sync.Mutex
	done      bool
	decision  string
	reason    string
}

func (g *gatedCall) result() (bool, string, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.done, g.decision, g.reason
}

// claudeStory is one scripted Claude Code session.
type claudeStory struct {
	s       *Sim
	session string
	agent   string
	cwd     string
	uses    int
	step    int
	gate    *gatedCall
	decide  time.Duration // when the simulated operator decides a pending call
}

// claudeSession starts a Claude Code session story; a new one follows a
// while after each ends.
func (s *Sim) claudeSession(ctx context.Context) {
	c := &claudeStory{s: s, session: uuid.NewString(), cwd: "/home/dev/src/shop",
		agent: fmt.Sprintf("agent-%08x", s.rng.Uint32())}
	s.logf("Claude Code session %s starts (driven through `clawpit hook`)", c.session[:8])
	c.next(ctx)
}

// payload is a hook payload with the common fields (Claude Code hooks reference).
func (c *claudeStory) payload(event string, extra map[string]any) []byte {
	p := map[string]any{
		"session_id": c.session, "cwd": c.cwd, "permission_mode": "default", "hook_event_name": event,
		"transcript_path": "/home/dev/.claude/projects/-home-dev-src-shop/" + c.session + ".jsonl",
	}
	for k, v := range extra {
		p[k] = v
	}
	b, _ := json.Marshal(p)
	return b
}

func (c *claudeStory) command() *exec.Cmd {
	return exec.Command(c.s.cfg.Exe, "--db", c.s.reg.Store().Path(), "hook",
		"--approval-timeout", claudeApprovalTimeout.String())
}

// fire runs a non-gating hook to completion, as Claude Code would.
func (c *claudeStory) fire(event string, extra map[string]any) {
	cmd := c.command()
	cmd.Stdin = bytes.NewReader(c.payload(event, extra))
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Run(); err != nil {
		c.s.fail("hook "+event, fmt.Errorf("%w: %s", err, strings.TrimSpace(se.String())))
	}
}

// tool fires the PostToolUse of a finished tool call (in the sub-agent when inAgent).
func (c *claudeStory) tool(name string, input map[string]any, inAgent bool) {
	c.uses++
	extra := map[string]any{"tool_name": name, "tool_input": input, "tool_response": map[string]any{"success": true},
		"tool_use_id": fmt.Sprintf("toolu_%s_%02d", c.session[:8], c.uses), "duration_ms": 40 + c.s.rng.IntN(900)}
	if inAgent {
		extra["agent_id"], extra["agent_type"] = c.agent, "test-runner"
	}
	c.fire("PostToolUse", extra)
}

// ask starts a gated PreToolUse hook in the background: the process waits
// for the decision like Claude Code's tool call does.
func (c *claudeStory) ask(name string, input map[string]any, inAgent bool) {
	c.uses++
	g := &gatedCall{toolUseID: fmt.Sprintf("toolu_%s_%02d", c.session[:8], c.uses), asked: c.s.vnow}
	extra := map[string]any{"tool_name": name, "tool_input": input, "tool_use_id": g.toolUseID}
	if inAgent {
		extra["agent_id"], extra["agent_type"] = c.agent, "test-runner"
	}
	cmd := c.command()
	cmd.Stdin = bytes.NewReader(c.payload("PreToolUse", extra))
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Start(); err != nil {
		c.s.fail("hook PreToolUse", err)
		g.done, g.decision, g.reason = true, "deny", err.Error()
		c.gate = g
		return
	}
	h := &c.s.hooks
	h.mu.Lock()
	if h.cmds == nil {
		h.cmds = map[*exec.Cmd]bool{}
	}
	h.cmds[cmd] = true
	h.wg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.wg.Done()
		cmd.Wait()
		h.mu.Lock()
		delete(h.cmds, cmd)
		h.mu.Unlock()
		var d struct {
			Out struct {
				Decision string `json:"permissionDecision"`
				Reason   string `json:"permissionDecisionReason"`
			} `json:"hookSpecificOutput"`
		}
		json.Unmarshal(so.Bytes(), &d)
		g.mu.Lock()
		g.done, g.decision, g.reason = true, d.Out.Decision, d.Out.Reason
		g.mu.Unlock()
	}()
	c.gate = g
	c.decide = c.s.between(40*time.Second, 80*time.Second)
	c.s.count(func(st *Stats) { st.Approvals++ })
	c.s.logf("Claude Code %s asks to run %s; the hook waits for a decision in clawpit", c.session[:8], name)
}

// waitGate reports whether the pending gated call is answered; meanwhile the
// simulated operator decides it once it has waited long enough.
func (c *claudeStory) waitGate(ctx context.Context, deny bool) (bool, string) {
	done, decision, reason := c.gate.result()
	if done {
		c.s.logf("Claude Code %s: hook answered %s (%s)", c.session[:8], decision, reason)
		return true, decision
	}
	if c.s.vnow.Sub(c.gate.asked) < c.decide {
		return false, ""
	}
	list, err := c.s.reg.ListApprovals(ctx, core.ApprovalFilter{ToolUseID: c.gate.toolUseID})
	if err != nil || len(list) == 0 || list[0].Status != core.ApprovalPending {
		return false, ""
	}
	if deny {
		c.s.act(ctx, "deny approval", func() (core.Result, error) {
			_, r, err := c.s.reg.DenyApproval(ctx, list[0].ID, "keep this change out of the release branch", c.s.op)
			return r, err
		})
	} else {
		c.s.act(ctx, "approve approval", func() (core.Result, error) {
			_, _, r, err := c.s.reg.ApproveApproval(ctx, list[0].ID, core.ScopeOnce, c.s.op)
			return r, err
		})
	}
	c.decide = time.Hour // decided once
	return false, ""
}

// next runs the script's next step and schedules the one after.
func (c *claudeStory) next(ctx context.Context) {
	s := c.s
	if s.stopped {
		return
	}
	again := func(d time.Duration) { s.after(d, c.next) }
	switch c.step {
	case 0:
		c.fire("SessionStart", map[string]any{"source": "startup", "model": "claude-sonnet-4-5"})
	case 1:
		c.tool("Read", map[string]any{"file_path": c.cwd + "/internal/cart/cart.go"}, false)
	case 2:
		c.fire("SubagentStart", map[string]any{"agent_id": c.agent, "agent_type": "test-runner"})
	case 3:
		c.tool("Grep", map[string]any{"pattern": "func Test", "path": c.cwd}, true)
	case 4:
		c.ask("Bash", map[string]any{"command": "go test ./...", "description": "Run the test suite before the fix"}, true)
	case 5:
		c.fire("Notification", map[string]any{"message": "Claude needs your permission to use Bash",
			"title": "Permission needed", "notification_type": "permission_prompt"})
	case 6:
		done, decision := c.waitGate(ctx, false)
		if !done {
			again(time.Second)
			return
		}
		if decision == "allow" {
			c.tool("Bash", map[string]any{"command": "go test ./...", "description": "Run the test suite before the fix"}, true)
		}
	case 7:
		c.fire("SubagentStop", map[string]any{"agent_id": c.agent, "agent_type": "test-runner", "stop_hook_active": false,
			"agent_transcript_path":  "/home/dev/.claude/projects/-home-dev-src-shop/" + c.session + "/subagents/" + c.agent + ".jsonl",
			"last_assistant_message": "214 tests pass; TestCartTotal is flaky under -race."})
	case 8:
		c.ask("Edit", map[string]any{"file_path": c.cwd + "/internal/cart/cart.go", "old_string": "total += p",
			"new_string": "total += p * q", "replace_all": false}, false)
	case 9:
		done, decision := c.waitGate(ctx, s.chance(0.3))
		if !done {
			again(time.Second)
			return
		}
		if decision == "allow" {
			c.tool("Edit", map[string]any{"file_path": c.cwd + "/internal/cart/cart.go"}, false)
		}
	case 10:
		c.fire("Stop", map[string]any{"stop_hook_active": false, "last_assistant_message": "Fixed the cart total; tests pass."})
	case 11:
		c.fire("SessionEnd", map[string]any{"reason": "prompt_input_exit"})
		s.logf("Claude Code session %s ended", c.session[:8])
		s.after(s.between(60*time.Second, 120*time.Second), s.claudeSession)
		return
	}
	c.step++
	switch c.step {
	case 11:
		again(s.between(15*time.Second, 30*time.Second))
	default:
		again(s.between(2*time.Second, 4*time.Second))
	}
}

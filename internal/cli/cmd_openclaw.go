package cli

// `clawpit openclaw [audit|maintenance]` (README "Use with Claude Code"): clawpit's console,
// audit and maintenance preview over OpenClaw's own registry, read-only.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
	"github.com/clawpit/clawpit/adapters/openclaw"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/termtext"
	"github.com/clawpit/clawpit/themes"
	"github.com/clawpit/clawpit/tui"
	"github.com/spf13/cobra"
)

// openclawFlags are the flags of `clawpit openclaw`.
type openclawFlags struct {
	stateDir string
	limit    int
	theme    string
	asStored bool
}

const defaultOpenclawLimit = 20

func openclawCommands(a *app) []*cobra.Command {
	var f openclawFlags
	cmd := &cobra.Command{
		Use:   "openclaw",
		Short: "Console over OpenClaw's task registry, read-only",
		Long: `Open clawpit's console on OpenClaw's own task registry
($OPENCLAW_STATE_DIR/state/openclaw.sqlite, default ~/.openclaw): tasks,
sub-agent runs, approvals (pending first) and audit alerts. Nothing is ever
written: OpenClaw owns the registry, and every action key says how to do it
with OpenClaw instead. The console shows every active task and the newest
5,000 finished rows per table; older rows are not shown.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runOpenclawConsole(cmd, a, &f) },
	}
	cmd.PersistentFlags().StringVar(&f.stateDir, "state-dir", "", "OpenClaw state directory (default $OPENCLAW_STATE_DIR, else ~/.openclaw)")
	cmd.PersistentFlags().IntVar(&f.limit, "limit", defaultOpenclawLimit, "text output: at most this many rows per section (JSON lists all)")
	cmd.Flags().StringVar(&f.theme, "theme", "", "console theme: "+joinNames(themes.Names()))
	audit := &cobra.Command{
		Use:   "audit",
		Short: "OpenClaw's task audit findings, plus the ones it misses",
		Long: `Print what 'openclaw tasks audit' (the text table) reports: tasks as
maintenance would leave them (a cron task it would recover shown with its
recovered status, an active task it would mark lost shown as lost),
stale_queued after 10 min, stale_running after 30 min, lost,
delivery_failed, missing_cleanup, inconsistent_timestamps, with OpenClaw's
severities, and OpenClaw's task-flow findings. It adds what clawpit knows
OpenClaw misses: a task still running whose sub-agent run has ended, a run
that ends before it started, an approval still pending past its expiry.

'openclaw tasks audit --json' audits the rows as stored instead (no task is
shown lost or recovered before maintenance runs); --as-stored gives that
audit. Read-only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runOpenclawAudit(cmd, a, &f) },
	}
	audit.Flags().BoolVar(&f.asStored, "as-stored", false, "audit the rows as stored, like 'openclaw tasks audit --json', not as maintenance would leave them")
	maint := &cobra.Command{
		Use:   "maintenance",
		Short: "Preview what 'openclaw tasks maintenance --apply' would do (never applies)",
		Long: `Preview, row for row, what 'openclaw tasks maintenance --apply' would do:
recover a running or lost cron task from a finished row of the same run;
mark lost an active sub-agent task whose child session is missing or wedged
once idle past the 5-minute grace (30 minutes for one owned by an agent
harness) — cli, acp and cron tasks are never marked lost by the 'openclaw'
command; delete finished tasks past cleanup_after (lost ones 24 h after they
ended at the latest) and cron runs beyond the newest 2,000 per job; stamp
cleanup_after on finished tasks without one; finish or repair task flows and
delete those a week past their end. Printed as clawpit's sweep report (a dry
run), with the audit as maintenance would leave the tasks. Nothing is
applied.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runOpenclawMaintenance(cmd, a, &f) },
	}
	cmd.AddCommand(audit, maint)
	return []*cobra.Command{cmd}
}

func openOpenclaw(cmd *cobra.Command, f *openclawFlags) (*openclaw.DB, error) {
	if f.limit < 1 {
		return nil, core.Invalidf("--limit %d: must be at least 1", f.limit)
	}
	return openclaw.Open(cmd.Context(), openclaw.StateDir(f.stateDir, os.Getenv))
}

func runOpenclawAudit(cmd *cobra.Command, a *app, f *openclawFlags) error {
	d, err := openOpenclaw(cmd, f)
	if err != nil {
		return err
	}
	defer d.Close()
	start := time.Now()
	rep, err := d.Audit(cmd.Context(), openclaw.Options{Now: start, AsStored: f.asStored})
	if err != nil {
		return err
	}
	if a.jsonOut {
		return a.printJSON(struct {
			Path       string `json:"path"`
			DurationMs int64  `json:"duration_ms"`
			*openclaw.AuditReport
		}{d.Path, time.Since(start).Milliseconds(), rep})
	}
	w := bufio.NewWriter(a.stdout)
	s := rep.Summary
	fmt.Fprintf(w, "OpenClaw audit of %s in %d ms: %d findings · %s · %s\n", d.Path, time.Since(start).Milliseconds(),
		s.Total, pluralWord(s.Errors, "error"), pluralWord(s.Warnings, "warning"))
	shown := map[string]int{}
	for _, x := range rep.Findings {
		shown[x.Code]++
		if shown[x.Code] > f.limit {
			continue
		}
		age := ""
		if x.AgeMs != nil {
			age = " " + termtext.Dur(time.Duration(*x.AgeMs)*time.Millisecond)
		}
		mark := ""
		if x.Source == "clawpit" {
			mark = " (clawpit)"
		}
		fmt.Fprintf(w, "  %-5s %s %s %s [%s%s]%s: %s%s\n", x.Severity, x.Code, x.Entity, termtext.Exact(x.ID, 60),
			x.Status, runtimeSuffix(x.Runtime), age, termtext.Exact(x.Detail, 200), mark)
	}
	for _, code := range codesInOrder(rep.Findings) {
		if n := shown[code] - f.limit; n > 0 {
			fmt.Fprintf(w, "  … and %d more %s (--json lists all)\n", n, code)
		}
	}
	return w.Flush()
}

func runtimeSuffix(r string) string {
	if r == "" {
		return ""
	}
	return ", " + r
}

func pluralWord(n int, w string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, w)
	}
	return fmt.Sprintf("%d %ss", n, w)
}

func codesInOrder(fs []openclaw.Finding) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range fs {
		if !seen[f.Code] {
			seen[f.Code] = true
			out = append(out, f.Code)
		}
	}
	return out
}

// sweepFinding maps an OpenClaw finding onto the sweep report's.
func sweepFinding(f openclaw.Finding) sweep.Finding {
	sev := sweep.SeverityWarning
	if f.Severity == openclaw.SevError {
		sev = sweep.SeverityError
	}
	return sweep.Finding{Kind: f.Code, Severity: sev, Entity: f.Entity, ID: f.ID, Detail: f.Detail}
}

func runOpenclawMaintenance(cmd *cobra.Command, a *app, f *openclawFlags) error {
	d, err := openOpenclaw(cmd, f)
	if err != nil {
		return err
	}
	defer d.Close()
	ctx := cmd.Context()
	start := time.Now()
	o := openclaw.Options{Now: start}
	if a.jsonOut {
		return openclawMaintenanceJSON(cmd, a, d, o)
	}
	rep := &sweep.Report{Mode: sweep.ModeDryRun, StartedAt: core.TS(start), Actions: []sweep.Action{}, Findings: []sweep.Finding{}}
	// Text lists --limit actions per rule; the rest is counted by index.
	o.MaxActions = f.limit
	counts, audit, err := d.PreviewAndAudit(ctx, o, func(x sweep.Action) error {
		rep.Actions = append(rep.Actions, x)
		return nil
	})
	if err != nil {
		return err
	}
	shown := map[string]int{}
	for _, x := range rep.Actions {
		shown[x.Rule]++
	}
	more := map[string]int{
		sweep.RuleGraceLost:        counts.Reconciled - shown[sweep.RuleGraceLost],
		sweep.RulePrune:            counts.Pruned - shown[sweep.RulePrune],
		sweep.RuleStamp:            counts.CleanupStamped - shown[sweep.RuleStamp],
		openclaw.RuleCronRecover:   counts.Recovered - shown[openclaw.RuleCronRecover],
		openclaw.RuleFlowReconcile: counts.FlowReconciled - shown[openclaw.RuleFlowReconcile],
	}
	// Task and flow prunes share a rule: the listing limit is per rule.
	more[sweep.RulePrune] += counts.FlowPruned
	order := []string{openclaw.RuleCronRecover, sweep.RuleGraceLost, sweep.RulePrune, sweep.RuleStamp, openclaw.RuleFlowReconcile}
	perCode := map[string]int{}
	for _, x := range audit.Findings {
		perCode[x.Code]++
		if perCode[x.Code] <= f.limit {
			rep.Findings = append(rep.Findings, sweepFinding(x))
		}
	}
	rep.DurationMs = time.Since(start).Milliseconds()
	rep.Counts = sweep.Counts{Lost: counts.Reconciled, Stamped: counts.CleanupStamped, Pruned: counts.Pruned,
		Errors: audit.Summary.Errors, Warnings: audit.Summary.Warnings}
	w := bufio.NewWriter(a.stdout)
	fmt.Fprintf(w, "OpenClaw maintenance preview of %s (nothing applied): 'openclaw tasks maintenance --apply' would reconcile %d · recover %d · stamp %d · prune %d; task flows: reconcile %d · prune %d\n",
		d.Path, counts.Reconciled, counts.Recovered, counts.CleanupStamped, counts.Pruned, counts.FlowReconciled, counts.FlowPruned)
	w.WriteString(rep.Text())
	for _, r := range order {
		if n := more[r]; n > 0 {
			fmt.Fprintf(w, "  … and %d more %s (--json lists all)\n", n, r)
		}
	}
	for _, code := range codesInOrder(audit.Findings) {
		if n := perCode[code] - f.limit; n > 0 {
			fmt.Fprintf(w, "  … and %d more audit %s (--json lists all)\n", n, code)
		}
	}
	return w.Flush()
}

// openclawMaintenanceJSON streams the report: the sweep report's fields
// ({mode, started_at, duration_ms, counts, actions, findings, truncated})
// plus path and openclaw (OpenClaw's own four counts). Actions are written
// as they are computed, so memory stays flat however many rows are due.
func openclawMaintenanceJSON(cmd *cobra.Command, a *app, d *openclaw.DB, o openclaw.Options) error {
	ctx := cmd.Context()
	w := bufio.NewWriter(a.stdout)
	enc := json.NewEncoder(termtext.JSONWriter(w))
	head, _ := json.Marshal(struct {
		Mode      string         `json:"mode"`
		Path      string         `json:"path"`
		StartedAt core.Timestamp `json:"started_at"`
	}{sweep.ModeDryRun, d.Path, core.TS(o.Now)})
	head = termtext.EscapeJSON(head)
	w.Write(head[:len(head)-1])
	w.WriteString(`,"actions":[`)
	n := 0
	counts, audit, err := d.PreviewAndAudit(ctx, o, func(x sweep.Action) error {
		if n > 0 {
			w.WriteByte(',')
		}
		n++
		return enc.Encode(x)
	})
	if err != nil {
		// What is still buffered is dropped; past 4 KiB a prefix may have
		// reached stdout, and the exit status says it is incomplete.
		return err
	}
	fs := make([]sweep.Finding, len(audit.Findings))
	for i, x := range audit.Findings {
		fs[i] = sweepFinding(x)
	}
	tail, _ := json.Marshal(struct {
		Findings   []sweep.Finding        `json:"findings"`
		Counts     sweep.Counts           `json:"counts"`
		OpenClaw   openclaw.PreviewCounts `json:"openclaw"`
		Audit      openclaw.AuditSummary  `json:"audit"`
		Truncated  bool                   `json:"truncated"`
		DurationMs int64                  `json:"duration_ms"`
	}{fs, sweep.Counts{Lost: counts.Reconciled, Stamped: counts.CleanupStamped, Pruned: counts.Pruned,
		Errors: audit.Summary.Errors, Warnings: audit.Summary.Warnings}, counts, audit.Summary, false,
		time.Since(o.Now).Milliseconds()})
	w.WriteString("],")
	w.Write(termtext.EscapeJSON(tail)[1:])
	w.WriteByte('\n')
	return w.Flush()
}

// openclawExplain answers every action key of the OpenClaw console: what
// to do in OpenClaw instead, short enough that an id fits an 80-column
// status line.
func openclawExplain(action string, t tui.Target, have bool) string {
	const owns = "read-only: OpenClaw owns this registry"
	switch {
	case have && t.Kind == feed.KindApproval && (action == "approve" || action == "deny"):
		if t.Status != "pending" {
			return "approval " + t.Short + " is already " + t.Status + " (" + owns + ")"
		}
		decision := "allow-once"
		if action == "deny" {
			decision = "deny"
		}
		return "read-only · answer in OpenClaw: /approve " + t.ID + " " + decision
	case have && t.Kind == feed.KindTask && (action == "cancel" || action == "kill"):
		return "read-only · run: openclaw tasks cancel " + t.ID
	case have && t.Kind == feed.KindRun && action == "kill":
		return "read-only · in OpenClaw: /subagents stop " + t.ID
	case action == "maintenance":
		return "read-only · preview: clawpit openclaw maintenance · apply: openclaw tasks maintenance --apply"
	}
	return owns + "; " + action + " is OpenClaw's to do"
}

func runOpenclawConsole(cmd *cobra.Command, a *app, f *openclawFlags) error {
	ctx := cmd.Context()
	th, err := themes.Resolve(f.theme, os.Getenv)
	if err != nil {
		return core.Invalidf("--theme: %v", err)
	}
	d, err := openOpenclaw(cmd, f)
	if err != nil {
		return err
	}
	src := openclaw.NewSource(d)
	defer src.Close()
	if !term.IsTerminal(os.Stdout.Fd()) || !term.IsTerminal(os.Stdin.Fd()) {
		return core.Invalidf("the console needs a terminal; for scripts use `clawpit openclaw audit` or `clawpit openclaw maintenance`")
	}
	p := tea.NewProgram(tui.New(openclawConsoleOptions(src, th)), tea.WithContext(ctx))
	_, err = p.Run()
	if err != nil && errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("console: %w", err)
	}
	return nil
}

// openclawConsoleOptions are the console's options over src: read-only, no
// sweeper, the OPENCLAW badge and the window note. src loads whole tables:
// the console reads its windows through feed.NewMemoryWindow, in the same
// orders and with the same filter as over clawpit's own registry.
func openclawConsoleOptions(src feed.Source, th *themes.Theme) tui.Options {
	return tui.Options{Source: src, Theme: th, Keys: tui.DefaultKeyMap(), ReadOnly: true, Operator: core.OperatorActor(),
		Owner: &tui.Owner{Name: "OPENCLAW", Note: fmt.Sprintf("active + newest %s finished rows", termtext.Thousands(openclaw.ConsoleWindow)),
			Explain: openclawExplain}}
}

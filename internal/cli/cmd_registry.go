package cli

// The registry commands of docs/contract.md "Commands: exit codes and JSON": session, task, run, approval and grant,
// one file per group (cmd_session.go, cmd_task.go, cmd_run.go,
// cmd_approval.go, cmd_grant.go) and the helpers they share, here.
//
// Each subcommand is an options struct and a run<Noun><Verb>(ctx, app, opts)
// function: the cobra command checks what only cobra knows (whether a flag
// was given at all) and fills the options; the run function validates values,
// opens the registry and prints. Tests call the run functions directly.
// Every command validates its input before it opens the database, so bad
// input exits 2 with nothing written; runtime-side commands act as
// core.ActorRuntime, operator decisions as core.OperatorActor().

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/spf13/cobra"
)

// defaultListLimit caps list output unless --limit says otherwise (0 = all):
// a registry may hold a million rows.
const defaultListLimit = 100

// registryCommands returns the session, task, run, approval and grant commands
// (docs/contract.md "Commands: exit codes and JSON").
func registryCommands(a *app) []*cobra.Command {
	return []*cobra.Command{
		sessionCommand(a),
		taskCommand(a),
		runCommand(a),
		approvalCommand(a),
		grantCommand(a),
		maintenanceCommand(a),
	}
}

// ---------------------------------------------------------------------------
// validation helpers (exit 2, before the database is opened)

// groupCommand is a parent command: without a subcommand it prints help; an
// unknown subcommand is a usage error naming it.
func groupCommand(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unknown command %q for %q (see '%s --help')", args[0], cmd.CommandPath(), cmd.CommandPath())}
			}
			return cmd.Help()
		},
	}
}

// requireFlag fails with a usage error when flag was not given.
func requireFlag(cmd *cobra.Command, names ...string) error {
	for _, n := range names {
		if !cmd.Flags().Changed(n) {
			return usageError{fmt.Errorf("required flag --%s not set (see '%s --help')", n, cmd.CommandPath())}
		}
	}
	return nil
}

// nonEmpty fails with ErrInvalid when a given flag holds an empty (or
// whitespace-only) value.
func nonEmpty(cmd *cobra.Command, names ...string) error {
	for _, n := range names {
		f := cmd.Flags().Lookup(n)
		if f != nil && f.Changed && strings.TrimSpace(f.Value.String()) == "" {
			return core.Invalidf("--%s must not be empty", n)
		}
	}
	return nil
}

// idArg checks a positional id is not blank.
func idArg(what, id string) (string, error) {
	if strings.TrimSpace(id) == "" {
		return "", core.Invalidf("empty %s id", what)
	}
	return id, nil
}

// parseDuration parses a Go duration flag ("90s", "5m", "1h30m"); a malformed
// or negative value is ErrInvalid naming the flag and the value.
func parseDuration(flag, s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, core.Invalidf("malformed duration %q for --%s (want e.g. 90s, 5m, 1h30m)", s, flag)
	}
	if d < 0 {
		return 0, core.Invalidf("negative duration %q for --%s", s, flag)
	}
	if err := checkDuration("--"+flag, d, 0, true); err != nil {
		return 0, err
	}
	return d, nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseList parses a comma-separated list of enum values with parse.
func parseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, p := range splitList(s) {
		v, err := parse(p)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// limitFlag adds --limit to a list command.
func limitFlag(cmd *cobra.Command, p *int) {
	cmd.Flags().IntVar(p, "limit", defaultListLimit, "show at most N rows, newest first (0 = all)")
}

func checkLimit(n int) error {
	if n < 0 {
		return core.Invalidf("negative --limit %d", n)
	}
	return nil
}

// showJSON prints an entity object with an "events" array added (docs/contract.md "Commands: exit codes and JSON" show).
func (a *app) showJSON(v any, evs []core.Event, usage *orderedObject) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if usage != nil {
		// "usage": {"by_model": [...], "total": {...}} (issue 27).
		u, err := json.Marshal(usage)
		if err != nil {
			return err
		}
		b = append(b[:len(b)-1], []byte(`,"usage":`)...)
		b = append(append(b, u...), '}')
	}
	if evs == nil {
		evs = []core.Event{}
	}
	e, err := json.Marshal(evs)
	if err != nil {
		return err
	}
	b = append(b[:len(b)-1], []byte(`,"events":`)...)
	b = append(append(b, e...), '}')
	return a.printJSON(json.RawMessage(b))
}

// listJSON prints a list as a JSON array, [] when empty.
func listJSON[T any](a *app, items []T) error {
	if items == nil {
		items = []T{}
	}
	return a.printJSON(items)
}

// now is the wall clock for relative ages in human output.
func now() time.Time { return time.Now() }

// showCommand builds `<entity> show ID`; runShow does the work.
func showCommand[T any](a *app, entity, use, short string,
	get func(*core.Registry, context.Context, string) (*T, []core.Event, error),
	fields func(n time.Time, x *T) []kv) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShow(cmd.Context(), a, entity, args[0], get, fields)
		},
	}
}

// runShow prints entity rawID (a full id or a unique prefix): with --json the
// entity object with "usage" (when it has token usage) and "events" added,
// else its fields as key: value lines, its usage, then its event journal.
// A blank id is ErrInvalid; an unknown one ErrNotFound, from get.
func runShow[T any](ctx context.Context, a *app, entity, rawID string,
	get func(*core.Registry, context.Context, string) (*T, []core.Event, error),
	fields func(n time.Time, x *T) []kv) error {
	id, err := idArg(entity, rawID)
	if err != nil {
		return err
	}
	reg, err := a.registry(ctx)
	if err != nil {
		return err
	}
	x, evs, err := get(reg, ctx, id)
	if err != nil {
		return err
	}
	prices, err := a.prices()
	if err != nil {
		return err
	}
	usage, lines, err := showUsage(ctx, reg, prices, any(x))
	if err != nil {
		return err
	}
	if a.jsonOut {
		return a.showJSON(x, evs, usage)
	}
	n := now()
	printKV(a.stdout, fields(n, x))
	printShowUsage(a.stdout, lines)
	printEvents(a.stdout, n, evs)
	return nil
}

// listOutput prints a list command's rows: a JSON array with --json, else a
// table with header and one row of cells per item, or "no <what>" (what is
// the plural noun: "tasks") when there is none.
func listOutput[T any](a *app, what string, items []T, header []string, cells func(n time.Time, x *T) []string) error {
	if a.jsonOut {
		return listJSON(a, items)
	}
	if len(items) == 0 {
		_, err := fmt.Fprintln(a.stdout, "no "+what)
		return err
	}
	tw := newTable(a.stdout)
	row(tw, header...)
	n := now()
	for i := range items {
		row(tw, cells(n, &items[i])...)
	}
	return tw.Flush()
}

// applyMutation resolves entity id rawID, opens the registry, applies op and
// prints the contract's mutation result with describe's subject and done text. With
// partial, an entity returned together with an error is printed before the
// error is returned; otherwise any error is returned at once.
func applyMutation[T any](ctx context.Context, a *app, entity, rawID string, partial bool,
	op func(context.Context, *core.Registry, string) (*T, core.Result, error),
	describe func(*T) (subject, done string)) error {
	id, err := idArg(entity, rawID)
	if err != nil {
		return err
	}
	reg, err := a.registry(ctx)
	if err != nil {
		return err
	}
	x, res, err := op(ctx, reg, id)
	if x == nil || (err != nil && !partial) {
		return err
	}
	subject, done := describe(x)
	if perr := a.printMutation(res, entity, x, subject, done); perr != nil {
		return perr
	}
	return err
}

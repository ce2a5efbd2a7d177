package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// rootFlagGroups are the root command's own flags by what they belong to:
// the console (clawpit with no command) and the headless sweep
// (--sweep-once). Neither is global: `clawpit --theme light task list` is
// refused, and the message says where the flag belongs.
var rootFlagGroups = []struct {
	title string
	names []string
}{
	{"Console flags (clawpit with no command)", []string{"theme", "readonly", "sweep-interval", "watchdog-interval", "attention", "quiet", "notify-cmd"}},
	{"Sweep flags (with --sweep-once; also the console's sweeps)", []string{"sweep-once", "dry-run", "grace", "silent-window", "retention", "lost-retention", "job-retention", "stale-queued", "stale-running"}},
}

// setRootUsageLazily arranges for setRootUsage to run the first time any
// command's usage or help is shown: rendering every flag's usage costs each
// run (each hook event) time that only a help screen needs.
func setRootUsageLazily(root *cobra.Command) {
	root.SetUsageFunc(func(c *cobra.Command) error {
		setRootUsage(root)
		root.SetUsageFunc(nil) // cobra's own, with the templates just set
		return c.Usage()
	})
}

// setRootUsage gives the root command a help that shows its flags in
// groups, global ones (--db, --json) apart, and keeps cobra's own template
// for every subcommand. Call it after every flag and command is added.
func setRootUsage(root *cobra.Command) {
	def := (&cobra.Command{}).UsageTemplate()
	walk(root, func(c *cobra.Command) {
		if c != root {
			c.SetUsageTemplate(def)
		}
	})
	var b strings.Builder
	b.WriteString("Usage:\n  {{.UseLine}}\n  {{.CommandPath}} [command]\n\nAvailable Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name \"help\"))}}\n  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}\n")
	seen := map[string]bool{}
	for _, g := range rootFlagGroups {
		fs := pflag.NewFlagSet(g.title, pflag.ContinueOnError)
		for _, n := range g.names {
			if f := root.LocalNonPersistentFlags().Lookup(n); f != nil {
				fs.AddFlag(f)
				seen[n] = true
			}
		}
		fmt.Fprintf(&b, "\n%s:\n%s", g.title, templateSafe(fs.FlagUsages()))
	}
	other := pflag.NewFlagSet("other", pflag.ContinueOnError)
	root.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		// --help is cobra's, added by the time a lazy call renders this.
		if !seen[f.Name] && f.Name != "help" {
			other.AddFlag(f)
		}
	})
	if u := other.FlagUsages(); u != "" {
		fmt.Fprintf(&b, "\nFlags:\n%s", templateSafe(u))
	}
	fmt.Fprintf(&b, "\nGlobal flags (every command):\n%s", templateSafe(root.PersistentFlags().FlagUsages()))
	b.WriteString("\nUse \"{{.CommandPath}} [command] --help\" for more information about a command.\n")
	root.SetUsageTemplate(b.String())
}

// templateSafe keeps pre-rendered text literal inside a text/template.
func templateSafe(s string) string {
	return strings.NewReplacer("{{", `{{"{{"}}`, "}}", `{{"}}"}}`).Replace(s)
}

// misplacedRootFlag explains an unknown flag of a subcommand that is one of
// the root's own flags ("--theme is a console flag …"); "" otherwise.
func misplacedRootFlag(root, cmd *cobra.Command, err error) string {
	if cmd == root {
		return ""
	}
	msg := err.Error()
	const p = "unknown flag: --"
	i := strings.Index(msg, p)
	if i < 0 {
		return ""
	}
	name, _, _ := strings.Cut(msg[i+len(p):], " ")
	for _, g := range rootFlagGroups {
		for _, n := range g.names {
			if n == name {
				where := "clawpit with no command"
				if strings.HasPrefix(g.title, "Sweep") {
					where = "clawpit --sweep-once, clawpit sweep and the console"
				}
				return fmt.Sprintf("--%s is not a flag of '%s': it belongs to %s (see 'clawpit --help')", name, cmd.CommandPath(), where)
			}
		}
	}
	return ""
}

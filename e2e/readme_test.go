package e2e

// TestREADMECommands runs every command of README.md's ```sh blocks, in
// order, in one bash shell (so `T=$(…)` carries on to the next command) with
// a private $HOME, $CLAWPIT_HOME and $TMPDIR, and compares each command's
// exit code and output with its expected shape: a line of readmeShapes, else
// the `# …` output lines the README shows under it, else exit 0 and no
// error. Only the commands of readmeSkips (the console and long-running
// ones) are not run. A command added to the README is picked up: it must
// then succeed, and a new entry in readmeShapes pins its output.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/adapters/openclaw"
)

// readmeCommand is one logical command of a README sh block.
type readmeCommand struct {
	line   int      // README line where it starts
	text   string   // the command as written (continuations joined)
	expect []string // the "# …" lines right under it: its output as the README shows it
}

// readmeCommands extracts the commands of every ```sh block of the README.
func readmeCommands(t *testing.T, path string) []readmeCommand {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []readmeCommand
	sc := bufio.NewScanner(f)
	in, n := false, 0
	var cur *readmeCommand
	for sc.Scan() {
		n++
		l := sc.Text()
		switch {
		case !in && strings.TrimSpace(l) == "```sh":
			in, cur = true, nil
			continue
		case in && strings.TrimSpace(l) == "```":
			in, cur = false, nil
			continue
		case !in:
			continue
		}
		trimmed := strings.TrimSpace(l)
		switch {
		case trimmed == "":
			cur = nil
		case strings.HasPrefix(trimmed, "#"):
			if cur != nil {
				cur.expect = append(cur.expect, strings.TrimSpace(strings.TrimPrefix(trimmed, "#")))
			}
		case cur != nil && strings.HasSuffix(cur.text, "\\"):
			cur.text += "\n" + l
		default:
			cmds = append(cmds, readmeCommand{line: n, text: l})
			cur = &cmds[len(cmds)-1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cmds
}

// readmeSkips are the README commands not run, by prefix, with the reason.
var readmeSkips = []struct{ prefix, why string }{
	{"go run -tags sqlite_fts5 . demo", "opens the console (needs a terminal; the tmux demo tests run it)"},
	{"go test -tags sqlite_fts5 ./...", "runs the whole test suite, this test included"},
	{"claude -p", "needs the claude CLI and an account (TestTrackTranscripts feeds recorded streams to task track)"},
	{"clawpit daemon", "runs until SIGINT/SIGTERM (TestDaemon runs it)"},
	{"clawpit serve", "runs until SIGTERM (the TestServe* tests run it with OpenSSH under tmux)"},
	{"ssh -p 2222", "opens the console over SSH (needs a terminal and the server: the TestServe* tests do this)"},
	{"clawpit openclaw  ", "opens the console on OpenClaw's registry (needs a terminal; TestOpenclawConsoleTmux runs it)"},
}

// Shapes of ids in output.
const (
	reTask = `[0-9a-z]{12}`
	reHex  = `[0-9a-f]{12}`
)

// readmeShapes pins the output of README commands (keyed by the command
// without its trailing comment): exit code and a regexp over stdout.
var readmeShapes = map[string]struct {
	code   int
	stdout string
}{
	"go build -tags sqlite_fts5 -o ~/.local/bin/clawpit .": {0, `^$`},
	"clawpit hooks install":                                {0, `^Installed clawpit hooks in \S+/\.claude/settings\.json \(registry \S+registry\.db; tool calls matching "Bash\|Write\|Edit\|MultiEdit\|NotebookEdit\|WebFetch\|mcp__\.\*" wait up to 10m for a decision\)\.\n`},
	"clawpit hooks install --settings ~/src/shop/.claude/settings.local.json --approval-timeout 5m --gate 'Bash|Write|Edit'": {0, `^Installed clawpit hooks in \S+/src/shop/\.claude/settings\.local\.json \(registry \S+; tool calls matching "Bash\|Write\|Edit" wait up to 5m for a decision\)\.\n`},
	"clawpit hooks install --run-inactivity 20m":                       {0, `^Installed clawpit hooks in \S+settings\.json .*\nNew Claude Code sessions`},
	"clawpit hooks install --on-failure block":                         {0, `^Installed clawpit hooks in \S+settings\.json .*\nIf the gated hook cannot answer \(binary moved, hook killed or timed out\), Claude Code blocks the tool call\.\n`},
	"clawpit hooks status":                                             {0, `^\S+/\.claude/settings\.json: 8 clawpit hooks\n  PreToolUse +\[[^]]+\] timeout \d+s, onFailure block: exec \S+/clawpit --db \S+ hook .*--gated --gate \S+ --installed-by clawpit\n`},
	"clawpit budget set --session-cost 5 --hour-cost 20 --action gate": {0, `^Budgets set: session \$5\.00, run none, hour \$20\.00; action gate\.\n$`},
	"clawpit budget":                    {0, `^per session  \$5\.00\nper run      none\nper hour     \$20\.00 \(every agent\)\naction       gate\nset by       tester@\S+, [0-9T:.Z-]+\n(raised       session:S1: \$10\.00\n)?$`},
	"clawpit budget raise S1 --cost 10": {0, `^Raised the budget of session S1 to \$10\.00\.\n$`},
	"clawpit hooks uninstall":           {0, `^Removed clawpit hooks: deleted \S+/\.claude/settings\.json, which 'hooks install' had created\.\n$`},
	"clawpit hook --help":               {0, `^Claude Code runs this command for each of its hook events(?s:.*)SessionStart(?s:.*)"hook_event_name": "PreToolUse"`},
	"clawpit operator add alice --role operator --key ~/alice.pub":    {0, `^operator alice added \(operator, 1 key\)\n$`},
	"clawpit operator add wall  --role readonly --key - < ~/wall.pub": {0, `^operator wall added \(readonly, 1 key\)\n$`},
	"clawpit operator list":                                 {0, `^NAME +ROLE +KEYS +AGE +CREATED BY\nalice +operator +SHA256:\S+ +\d+s +tester@\S+\nwall +readonly +SHA256:\S+ +\d+s +tester@\S+\n$`},
	"clawpit openclaw audit":                                {0, `^OpenClaw audit of \S+/\.openclaw/state/openclaw\.sqlite in \d+ ms: \d+ findings · \d+ errors · \d+ warnings\n(  (error|warn) \S+ \S+ \S+ .*\n)+`},
	"clawpit openclaw audit --as-stored":                    {0, `^OpenClaw audit of \S+/\.openclaw/state/openclaw\.sqlite in \d+ ms: \d+ findings · \d+ errors · \d+ warnings\n(  (error|warn) \S+ \S+ \S+ .*\n)+`},
	"clawpit openclaw maintenance":                          {0, `^OpenClaw maintenance preview of \S+ \(nothing applied\): 'openclaw tasks maintenance --apply' would reconcile \d+ · recover \d+ · stamp \d+ · prune \d+; task flows: reconcile \d+ · prune \d+\nSweep dry run in \d+ ms: \d+ lost · `},
	"clawpit openclaw maintenance --json":                   {0, `^\{"mode":"dry_run","path":"\S+","started_at":"[0-9T:.Z-]+","actions":\[\{"rule":"\w+"`},
	"clawpit openclaw --state-dir ~/.openclaw audit --json": {0, `(?s)^\{\n  "path": "\S+",\n  "duration_ms": \d+,\n  "findings": \[\n    \{\n      "code": "\w+",`},
	`export PATH="$HOME/.local/bin:$PATH"`:                  {0, `^$`},
	"clawpit --help":                                        {0, `(?s)^clawpit records an agent runtime's work.*Available Commands:.*Console flags.*Sweep flags.*Global flags \(every command\):.*--db string`},
	"export CLAWPIT_HOME=$(mktemp -d)":                      {0, `^$`},
	`clawpit session open S1 --label "review bot"`:          {0, `^session S1 active\n$`},
	`clawpit run register R1 --session S1:sub:R1 --requester S1 --label "fix the flaky test"`:           {0, `^run R1 running \(child session S1:sub:R1, inactivity budget 1m\)\n$`},
	`T=$(clawpit task create --runtime subagent --run-id R1 --session S1 --label "fix the flaky test")`: {0, `^$`},
	`clawpit task start "$T" --summary "reading the failing test"`:                                      {0, `^task ` + reTask + ` running\n$`},
	"clawpit run progress R1":                                      {0, `^run R1 running\n$`},
	`clawpit task progress "$T" --summary "running go test ./..."`: {0, `^task ` + reTask + ` running\n$`},
	`clawpit task output "$T" --count 2`:                           {0, `^task ` + reTask + ` output_count 2\n$`},
	"clawpit run kill R1":                                          {0, `^run R1 ended \(killed\)\n$`},
	"clawpit sweep": {0, `^Sweep applied in \d+ ms: (1|0) lost · 0 timed out · 0 expired · 0 silent · \d+ stamped · 0 pruned · 0 raced; audit: 0 errors · 0 warnings\n` +
		`(  early_lost task ` + reTask + `: running → lost — subagent run ended \(killed\)\n)?$`},
	"clawpit run complete R1 --outcome ok":               {0, `^run R1: 1 task lost → succeeded; late completion \(ok\) after run ended \(killed\) \(1 of 1 mirrored tasks updated\)\n  task ` + reTask + ` succeeded\n$`},
	`clawpit task finish "$T" --subtype error_max_turns`: {0, `^task ` + reTask + `: not applied: succeeded is final: no downgrade to failed\n$`},
	`clawpit task show "$T"`:                             {0, `(?s)^id: +` + reTask + `\nstatus: +succeeded\n.*\nevents \(8\):\n.*lost → succeeded .*succeeded → failed +runtime +ignored +succeeded is final`},
	"clawpit task list --status running,lost":            {0, `^no tasks\n$`},
	`A=$(clawpit approval request --session S1 --tool Bash --command "git push --force-with-lease origin fix/retry" \
      --rationale "push the rebased branch")`: {0, `^$`},
	`clawpit approval wait "$A" --timeout 10m &`:                                           {0, `^approval ` + reHex + ` approved \(session\) by tester@\S+\n$`},
	`clawpit approval approve "${A:0:6}" --scope session`:                                  {0, `^approval ` + reHex + ` approved \(session\); grant ` + reHex + ` remembers Bash git push\n$`},
	`wait $!; echo "approval wait exited $?"`:                                              {0, `^approval wait exited 0\n$`},
	"clawpit grant list":                                                                   {0, `^ID +SCOPE +SESSION +TOOL +PATTERN +AGE +CREATED BY\n` + reHex + ` +session +S1 +Bash +git push +\d+s +tester@\S+\n$`},
	`clawpit approval request --session S1 --tool Bash --command "git push --tags origin"`: {0, `^` + reHex + `\n$`},
	`J=$(clawpit --json job run --session S1 -- sh -c 'echo step 1; echo API_KEY=sk-abcdefghijklmnopqrstuvwxyz123456' | jq -r .job.id)`: {0, `^$`},
	`clawpit job status "$J"`: {0, `^` + reHex + ` (pending|running|completed)( for \d+s|.*)\n$`},
	// Right after job run the log may not have every line yet.
	`clawpit job tail "$J"`:         {0, `^(step 1\n(API_KEY=\*\*\*REDACTED\*\*\*\n)?)?$`},
	`clawpit job follow "$J"`:       {0, `^step 1\nAPI_KEY=\*\*\*REDACTED\*\*\*\n$`},
	"clawpit job list":              {0, `^ID +STATUS +EXIT +SESSION +AGE +COMMAND\n` + reHex + ` +completed +0 +S1 .*API_KEY=\*\*\*REDACTED\*\*\*'\n` + reHex + ` +running +- +S1 +\d+s +sleep 300\n$`},
	`clawpit job cancel "$J"`:       {0, `^job ` + reHex + `(: not applied: already completed| cancelled)\n$`},
	"clawpit job reap --session S1": {0, `^reaped 1 job of session S1: ` + reHex + `\n$`},
	"clawpit sweep --dry-run":       {0, `^Sweep dry run in \d+ ms: 0 lost · .*audit: 0 errors · 0 warnings\n$`},
	"clawpit sweep --json":          {0, `(?s)^\{\n  "mode": "applied",\n.*"counts": \{.*"actions": \[\],.*\}\n$`},
}

// commandKey is text without a trailing "   # comment" (two or more spaces
// before the #, as the README aligns them).
func commandKey(text string) string {
	if i := regexp.MustCompile(`\s{2,}#`).FindStringIndex(text); i != nil {
		text = text[:i[0]]
	}
	return strings.TrimSpace(text)
}

// shapeOf turns the README's "# …" output lines into a regexp: ids and
// numbers match any id or number, "/…/" any path.
func shapeOf(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		q := regexp.QuoteMeta(l)
		q = regexp.MustCompile(`[0-9a-f]{12}`).ReplaceAllString(q, reHex)
		q = strings.ReplaceAll(q, "/…/", "/.*/")
		b.WriteString(q + `\n`)
	}
	return "^" + b.String() + "$"
}

func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README")
	}
	cmds := readmeCommands(t, inRepo("README.md"))
	if len(cmds) < 30 {
		t.Fatalf("found %d commands in README.md's sh blocks: the parser is broken", len(cmds))
	}
	dir := t.TempDir()
	home, tmp := filepath.Join(dir, "home"), filepath.Join(dir, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// An OpenClaw registry where "Use with OpenClaw" looks (~/.openclaw).
	ocDB := filepath.Join(home, ".openclaw", "state", "openclaw.sqlite")
	if err := os.MkdirAll(filepath.Dir(ocDB), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := openclaw.WriteFixture(context.Background(), ocDB, openclaw.FixtureSpec{Now: time.Now(), Shapes: true, WAL: true}); err != nil {
		t.Fatal(err)
	}
	gocache, _ := exec.Command("go", "env", "GOCACHE").Output()
	gomod, _ := exec.Command("go", "env", "GOMODCACHE").Output()
	// The script: each command's stdout, stderr and exit code go to files
	// named by its index; the shell itself carries variables between them.
	var script strings.Builder
	script.WriteString("set +e\n")
	var run []int
	for i, c := range cmds {
		skip := ""
		for _, s := range readmeSkips {
			if strings.HasPrefix(c.text, s.prefix) {
				skip = s.why
			}
		}
		if skip != "" {
			t.Logf("README.md:%d not run (%s): %s", c.line, skip, c.text)
			continue
		}
		run = append(run, i)
		fmt.Fprintf(&script, "{\n%s\n} >%s/%d.out 2>%s/%d.err </dev/null\necho $? >%s/%d.rc\n", c.text, dir, i, dir, i, dir, i)
	}
	script.WriteString("kill $(jobs -p) 2>/dev/null\nexit 0\n") // a background command the README left running
	sh := exec.Command("bash", "-c", script.String())
	sh.Dir = repoRoot // where a reader runs the README (it builds from ".")
	sh.Env = []string{
		"PATH=" + filepath.Dir(clawpitBin) + ":" + os.Getenv("PATH"),
		"HOME=" + home, "TMPDIR=" + tmp, "CLAWPIT_HOME=" + filepath.Join(dir, "clawpit"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + filepath.Join(home, ".state"),
		"GOCACHE=" + strings.TrimSpace(string(gocache)), "GOMODCACHE=" + strings.TrimSpace(string(gomod)),
		"USER=tester", "LANG=C.UTF-8", "TZ=UTC", "SSH_CONNECTION=",
	}
	// The commands run in the repository (README builds from "."): none may
	// leave a file there (a relative --settings path once did).
	gitStatus := func() []byte {
		st := exec.Command("git", "status", "--porcelain", "--untracked-files=all")
		st.Dir = repoRoot
		b, _ := st.Output()
		return b
	}
	before := gitStatus()
	t.Cleanup(func() {
		after := gitStatus()
		if string(after) != string(before) {
			t.Errorf("README commands changed the repository:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})
	done := make(chan error, 1)
	var combined strings.Builder
	sh.Stdout, sh.Stderr = &combined, &combined
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- sh.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the README script: %v\n%s\n%s", err, combined.String(), script.String())
		}
	case <-time.After(3 * time.Minute):
		sh.Process.Kill()
		t.Fatal("the README script ran over 3 minutes")
	}
	// Reap what the README started (the jobs) before the temp dir goes.
	t.Cleanup(func() {
		dbs, _ := filepath.Glob(filepath.Join(tmp, "*", "registry.db"))
		for _, db := range append(dbs, filepath.Join(dir, "clawpit", "registry.db")) {
			if _, err := os.Stat(db); err == nil {
				c := &cli{t: t, db: db, home: filepath.Dir(db)}
				c.run("job", "reap", "--session", "S1")
			}
		}
	})
	for _, i := range run {
		c := cmds[i]
		read := func(ext string) string {
			b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.%s", i, ext)))
			return string(b)
		}
		stdout, stderr := read("out"), read("err")
		code, err := strconv.Atoi(strings.TrimSpace(read("rc")))
		if err != nil {
			t.Errorf("README.md:%d %s: no exit code (the script stopped before it?)", c.line, c.text)
			continue
		}
		key := commandKey(c.text)
		want, pinned := readmeShapes[key]
		switch {
		case pinned:
		case len(c.expect) > 0:
			want.stdout = shapeOf(c.expect)
		default:
			want.stdout = `(?s).*`
		}
		if code != want.code || !regexp.MustCompile(want.stdout).MatchString(stdout) {
			t.Errorf("README.md:%d %s\nexit %d (want %d)\nstdout:\n%s\nwant stdout matching %s\nstderr:\n%s", c.line, key, code, want.code, stdout, want.stdout, stderr)
		}
		if !pinned {
			t.Logf("README.md:%d unpinned %q: exit %d stdout %q stderr %q", c.line, key, code, stdout, stderr)
		}
	}
}

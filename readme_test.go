package main

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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
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
	{"go run . demo", "opens the console (needs a terminal; the tmux demo tests run it)"},
	{"go test ./...", "runs the whole test suite, this test included"},
	{"claude -p", "needs the claude CLI and an account (TestTrackTranscripts feeds recorded streams to task track)"},
	{"clawpit daemon", "runs until SIGINT/SIGTERM (TestDaemon runs it)"},
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
}{}

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
	cmds := readmeCommands(t, "README.md")
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
	sh.Env = []string{
		"PATH=" + filepath.Dir(clawpitBin) + ":" + os.Getenv("PATH"),
		"HOME=" + home, "TMPDIR=" + tmp, "CLAWPIT_HOME=" + filepath.Join(dir, "clawpit"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + filepath.Join(home, ".state"),
		"GOCACHE=" + strings.TrimSpace(string(gocache)), "GOMODCACHE=" + strings.TrimSpace(string(gomod)),
		"USER=tester", "LANG=C.UTF-8", "TZ=UTC", "SSH_CONNECTION=",
	}
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
		for _, db := range []string{filepath.Join(dir, "clawpit", "registry.db")} {
			if _, err := os.Stat(db); err == nil {
				c := &cli{t: t, db: db, home: filepath.Join(dir, "clawpit")}
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

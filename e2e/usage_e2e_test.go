package e2e

// Usage (issue 27) end to end through the binary: `task track` on the real
// Claude stream-json transcripts records the tokens their result lines
// report, and `task show --json` and `usage --json` carry them.

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// resultTokens is what a transcript's result line reports, read with
// encoding/json on its own: modelUsage summed over models, else usage.
func resultTokens(t *testing.T, file string) core.Tokens {
	t.Helper()
	f, err := os.Open(filepath.Join(transcriptDir, file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got core.Tokens
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l struct {
			Type  string `json:"type"`
			Usage *struct {
				In  int64 `json:"input_tokens"`
				Out int64 `json:"output_tokens"`
				CW  int64 `json:"cache_creation_input_tokens"`
				CR  int64 `json:"cache_read_input_tokens"`
			} `json:"usage"`
			ModelUsage map[string]struct {
				In  int64 `json:"inputTokens"`
				Out int64 `json:"outputTokens"`
				CW  int64 `json:"cacheCreationInputTokens"`
				CR  int64 `json:"cacheReadInputTokens"`
			} `json:"modelUsage"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "result" {
			continue
		}
		got = core.Tokens{}
		for _, m := range l.ModelUsage {
			got = got.Add(core.Tokens{Input: m.In, Output: m.Out, CacheWrite: m.CW, CacheRead: m.CR})
		}
		if len(l.ModelUsage) == 0 && l.Usage != nil {
			got = core.Tokens{Input: l.Usage.In, Output: l.Usage.Out, CacheWrite: l.Usage.CW, CacheRead: l.Usage.CR}
		}
		break // the first result is the verdict
	}
	return got
}

func TestTrackTranscriptsUsage(t *testing.T) {
	c := newCLI(t)
	var all core.Tokens
	for _, tr := range transcripts(t) {
		f, err := os.Open(filepath.Join(transcriptDir, tr.file))
		if err != nil {
			t.Fatal(err)
		}
		o := c.runIn(f, "--json", "task", "track", "--label", tr.file)
		f.Close()
		if o.code != 0 {
			t.Fatalf("track %s: %s", tr.file, o)
		}
		var res trackResult
		if err := json.Unmarshal([]byte(o.stdout), &res); err != nil {
			t.Fatal(err)
		}
		want := resultTokens(t, tr.file)
		all = all.Add(want)
		show := c.ok("--json", "task", "show", res.Task.ID)
		var shown struct {
			Usage *struct {
				Total struct {
					Tokens core.Tokens `json:"tokens"`
				} `json:"total"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(show), &shown); err != nil {
			t.Fatal(err)
		}
		if shown.Usage == nil || shown.Usage.Total.Tokens != want {
			t.Errorf("%s: task show usage %+v, the result line says %+v", tr.file, shown.Usage, want)
		}
	}
	if all.IsZero() {
		t.Fatal("the transcripts report no tokens: the test could not fail")
	}
	var rep struct {
		Total struct {
			Tokens core.Tokens `json:"tokens"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(c.ok("--json", "usage", "--by", "task")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Total.Tokens != all {
		t.Errorf("usage --by task total %+v, the result lines say %+v", rep.Total.Tokens, all)
	}
}

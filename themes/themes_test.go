package themes

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestGetEveryTheme(t *testing.T) {
	want := []string{"dark", "high-contrast", "light", "mono"}
	if got := strings.Join(Names(), ","); got != strings.Join(want, ",") {
		t.Fatalf("Names() = %s, want %v", got, want)
	}
	for _, n := range want {
		th, err := Get(n)
		if err != nil {
			t.Fatalf("Get(%q): %v", n, err)
		}
		if th.Name != n {
			t.Errorf("Get(%q).Name = %q", n, th.Name)
		}
		for _, s := range []string{"running", "queued", "pending", "succeeded", "failed", "lost", "timed_out", "cancelled"} {
			if th.Status(s).Render(s) == "" {
				t.Errorf("%s: status %s renders empty", n, s)
			}
		}
	}
}

func TestGetUnknownNamesAllowed(t *testing.T) {
	_, err := Get("neon")
	if err == nil || !strings.Contains(err.Error(), `"neon"`) || !strings.Contains(err.Error(), "high-contrast") {
		t.Fatalf("Get(neon) error = %v", err)
	}
}

func TestResolve(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		name, flag string
		env        map[string]string
		want       string
		wantErr    bool
	}{
		{"default", "", nil, "dark", false},
		{"flag", "light", nil, "light", false},
		{"no color wins", "light", map[string]string{"NO_COLOR": "1"}, "mono", false},
		{"no color any value", "", map[string]string{"NO_COLOR": "yes"}, "mono", false},
		{"bad name still an error", "neon", map[string]string{"NO_COLOR": "1"}, "", true},
		{"bad name", "neon", nil, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			th, err := Resolve(c.flag, env(c.env))
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err == nil && th.Name != c.want {
				t.Fatalf("theme = %s, want %s", th.Name, c.want)
			}
		})
	}
}

func TestMonoHasNoColour(t *testing.T) {
	th, _ := Get(Mono)
	out := th.Status("failed").Render("failed") + th.Selected.Render("row") + th.Hot.Render("3") +
		th.Dialog.Render("box") + th.Badge.Render("READ-ONLY")
	for _, seq := range sgr.FindAllStringSubmatch(out, -1) {
		for _, p := range strings.Split(seq[1], ";") {
			n, _ := strconv.Atoi(p)
			if (n >= 30 && n <= 49) || (n >= 90 && n <= 107) {
				t.Fatalf("mono output %q sets a colour (SGR %s)", out, seq[1])
			}
		}
	}
}

var sgr = regexp.MustCompile("\x1b\\[([0-9;]*)m")

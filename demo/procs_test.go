package demo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawpit/clawpit/redact"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSecretLinesRedacted checks every planted secret against the J4 redactor
// as the supervisor applies it (line by line, stateful for PEM) and as tails
// apply it (one block): none survives, and the chatter around them does.
func TestSecretLinesRedacted(t *testing.T) {
	red := redact.Default()
	lr := red.NewLineRedactor()
	var perLine []string
	for _, l := range SecretLines() {
		perLine = append(perLine, string(lr.Line([]byte(l))))
	}
	outs := map[string]string{
		"per line": strings.Join(perLine, "\n"),
		"block":    red.Block(strings.Join(SecretLines(), "\n")),
	}
	for name, out := range outs {
		for _, s := range PlantedSecrets() {
			if strings.Contains(out, s) {
				t.Errorf("%s: secret %q survived redaction", name, s)
			}
		}
		if n := strings.Count(out, redact.Redacted); n < len(PlantedSecrets()) {
			t.Errorf("%s: %d redactions, want ≥ %d:\n%s", name, n, len(PlantedSecrets()), out)
		}
		for _, keep := range []string{"deploy: loading environment", "export OPENAI_API_KEY=", "postgres://deploy:", "-----BEGIN RSA PRIVATE KEY-----", "rollout started"} {
			if !strings.Contains(out, keep) {
				t.Errorf("%s: lost the non-secret text %q", name, keep)
			}
		}
	}
	// The planted values are really in the raw lines (the test is not vacuous).
	raw := strings.Join(SecretLines(), "\n")
	for _, s := range PlantedSecrets() {
		if !strings.Contains(raw, s) {
			t.Errorf("planted secret %q missing from SecretLines", s)
		}
	}
}

// TestSecretsHelper runs the helper body: secrets first (stderr ones on
// stderr), then the heartbeat, until cancelled.
func TestSecretsHelper(t *testing.T) {
	var out, errOut syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		Secrets(ctx, 20*time.Millisecond, &out, &errOut)
		close(done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "check #2") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	if !strings.Contains(out.String(), "export OPENAI_API_KEY=") || !strings.Contains(out.String(), "check #2") {
		t.Fatalf("stdout:\n%s", out.String())
	}
	if !strings.Contains(errOut.String(), "GITHUB_TOKEN=") || strings.Contains(out.String(), "GITHUB_TOKEN=") {
		t.Fatalf("the [stderr] line went to the wrong stream:\nstdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
}

var accessLine = regexp.MustCompile(`^127\.0\.0\.1 - - \[[^\]]+\] "GET (\S+) HTTP/1\.1" (\d{3}) \d+ "-" "test-agent" [\d.]+ms$`)

// TestDevServer serves a few requests and checks one access-log line each,
// with the status the route gives, and a stderr line for the 500.
func TestDevServer(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- DevServer(ctx, port, &out, &errOut) }()
	want := map[string]int{"/": 200, "/api/tasks?page=2": 200, "/favicon.ico": 404, "/api/admin": 403, "/api/crash": 500}
	client := &http.Client{Timeout: 2 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for path, code := range want {
		var resp *http.Response
		for i := 0; i < 100; i++ { // the listener may take a moment
			req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", port, path), nil)
			req.Header.Set("User-Agent", "test-agent")
			if resp, err = client.Do(req); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, code)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if m := accessLine.FindStringSubmatch(l); m != nil {
			got[m[1]] = m[2]
		}
	}
	for path, code := range want {
		if got[path] != fmt.Sprint(code) {
			t.Errorf("no access-log line for GET %s → %d in:\n%s", path, code, out.String())
		}
	}
	if !strings.Contains(errOut.String(), "Internal server error") {
		t.Errorf("no stderr line for the 500:\n%s", errOut.String())
	}
	if !strings.Contains(out.String(), "dev server stopped") {
		t.Errorf("no shutdown line:\n%s", out.String())
	}
}

// TestDevServerPortBusy: a taken port is an error, said on stderr.
func TestDevServerPortBusy(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go DevServer(ctx, port, &out, &errOut)
	time.Sleep(100 * time.Millisecond)
	if err := DevServer(ctx, port, &out, &errOut); err == nil {
		t.Fatal("second server on the same port started")
	}
	if !strings.Contains(errOut.String(), "listen on") {
		t.Fatalf("stderr: %q", errOut.String())
	}
}

// TestBuild: the failing build and the passing tests, shortened.
func TestBuild(t *testing.T) {
	for _, tc := range []struct {
		code int
		last string
	}{{2, "build failed"}, {0, "PASS"}} {
		var out, errOut syncBuffer
		code := Build(context.Background(), BuildOptions{Duration: 100 * time.Millisecond, ExitCode: tc.code}, &out, &errOut)
		if code != tc.code {
			t.Errorf("exit code %d, want %d", code, tc.code)
		}
		if !strings.Contains(out.String(), tc.last) {
			t.Errorf("exit %d: stdout lacks %q:\n%s", tc.code, tc.last, out.String())
		}
		if tc.code != 0 && !strings.Contains(errOut.String(), "warning:") {
			t.Errorf("no warnings on stderr:\n%s", errOut.String())
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if code := Build(ctx, BuildOptions{Duration: time.Hour}, io.Discard, io.Discard); code != 130 {
		t.Errorf("cancelled build: exit code %d, want 130", code)
	}
}

// TestWatchOwner: a helper stops when its owner is gone, not before.
func TestWatchOwner(t *testing.T) {
	env := OwnerEnv()
	if env == "" {
		t.Skip("no /proc start time")
	}
	_, self, _ := strings.Cut(env, "=")
	ctx, cancel := WatchOwner(context.Background(), self, 10*time.Millisecond)
	defer cancel()
	select {
	case <-ctx.Done():
		t.Fatal("cancelled while the owner (this process) is alive")
	case <-time.After(100 * time.Millisecond):
	}
	pid, _, _ := strings.Cut(self, ":")
	gone, cancel2 := WatchOwner(context.Background(), pid+":1", 10*time.Millisecond) // same pid, other start time
	defer cancel2()
	select {
	case <-gone.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("not cancelled for an owner that is gone")
	}
	free, cancel3 := WatchOwner(context.Background(), "garbage", 10*time.Millisecond)
	defer cancel3()
	select {
	case <-free.Done():
		t.Fatal("a malformed owner cancelled the helper")
	case <-time.After(50 * time.Millisecond):
	}
}

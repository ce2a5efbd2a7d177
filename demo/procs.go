package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawpit/clawpit/supervisor"
)

// The bodies of the demo's helper processes. `clawpit demo` runs them as real
// background jobs through the job supervisor — the clawpit binary itself under
// hidden subcommands, so the demo needs nothing but the binary (no shell, no
// python, no curl) — and the supervisor's log capture, rotation and redaction
// (docs/contract.md "Background jobs") are the real ones.

// Hidden subcommands of the clawpit binary that run the helper processes.
const (
	DevServerCommand = "__demo-devserver" // HTTP server on 127.0.0.1 logging one line per request
	BuildCommand     = "__demo-build"     // build progress, warnings on stderr, then exit code 2
	SecretsCommand   = "__demo-secrets"   // fake secrets of the J4 kinds, then a heartbeat
)

// EnvOwner names the environment variable, "<pid>:<start time>", through which
// a helper process learns which demo process owns it: WatchOwner stops the
// helper when that process is gone, so a demo killed with SIGKILL leaves no
// dev server behind.
const EnvOwner = "CLAWPIT_DEMO_OWNER"

// OwnerEnv returns the EnvOwner entry ("CLAWPIT_DEMO_OWNER=<pid>:<start>") for
// the current process, or "" when its start time cannot be read.
func OwnerEnv() string {
	pid := os.Getpid()
	start, err := supervisor.ProcStartTime(pid)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s=%d:%d", EnvOwner, pid, start)
}

// WatchOwner returns a context that is cancelled with ctx, or as soon as the
// demo process named by owner ("<pid>:<start time>", the EnvOwner value) is
// gone, checked every interval. An empty or malformed owner watches nothing.
func WatchOwner(ctx context.Context, owner string, interval time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	p, s, ok := strings.Cut(owner, ":")
	pid, err1 := strconv.Atoi(p)
	start, err2 := strconv.ParseInt(s, 10, 64)
	if !ok || err1 != nil || err2 != nil || pid <= 0 {
		return ctx, cancel
	}
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if !supervisor.ProcessAlive(pid, start) {
					cancel()
					return
				}
			}
		}
	}()
	return ctx, cancel
}

// lineWriter serialises whole lines to w (stdout and stderr of a helper are
// pipes read by the supervisor; one Write per line keeps lines intact).
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) printf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	l.mu.Lock()
	io.WriteString(l.w, s)
	l.mu.Unlock()
}

// sleep waits d or until ctx is done; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// devRoute is how the dev server answers a path.
type devRoute struct {
	status int
	body   string
}

// devRoutes answers by path prefix; anything else is a 404.
var devRoutes = []struct {
	prefix string
	route  devRoute
}{
	{"/health", devRoute{200, "ok\n"}},
	{"/api/tasks", devRoute{200, `{"tasks":[{"id":"t1","status":"running"}]}` + "\n"}},
	{"/api/runs", devRoute{200, `{"runs":[]}` + "\n"}},
	{"/api/search", devRoute{200, `{"hits":12}` + "\n"}},
	{"/api/login", devRoute{302, ""}},
	{"/oauth/callback", devRoute{302, ""}},
	{"/api/admin", devRoute{403, "forbidden\n"}},
	{"/api/crash", devRoute{500, "internal server error\n"}},
	{"/static/", devRoute{200, strings.Repeat("/* css */\n", 40)}},
	{"/", devRoute{200, "<!doctype html><title>demo app</title>\n"}},
}

func routeFor(path string) devRoute {
	for _, r := range devRoutes {
		if r.prefix == "/" {
			if path == "/" || path == "/index.html" {
				return r.route
			}
			continue
		}
		if strings.HasPrefix(path, r.prefix) {
			return r.route
		}
	}
	return devRoute{404, "not found\n"}
}

// DevServer serves HTTP on 127.0.0.1:port until ctx is done, like a frontend
// dev server: a few start-up lines, then one access-log line per request on
// out (`127.0.0.1 - - [22/Nov/2026:10:04:05 +0000] "GET /api/tasks HTTP/1.1"
// 200 43 "-" "clawpit-demo/1" 0.4ms`) and, now and then, a warning or an
// error on errOut (5xx answers, slow requests). It returns an error when the
// port cannot be bound.
func DevServer(ctx context.Context, port int, out, errOut io.Writer) error {
	o, e := &lineWriter{w: out}, &lineWriter{w: errOut}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		e.printf("error: listen on 127.0.0.1:%d: %v", port, err)
		return err
	}
	began := time.Now()
	o.printf("> demo-app@0.3.1 dev")
	o.printf("> vite --host 127.0.0.1 --port %d", port)
	o.printf("")
	o.printf("  VITE v5.4.2  ready in %d ms", 180+port%300)
	o.printf("")
	o.printf("  ➜  Local:   http://%s/", ln.Addr())
	o.printf("  ➜  Network: use --host to expose")
	var (
		mu sync.Mutex
		n  int
	)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		mu.Lock()
		n++
		seq := n
		mu.Unlock()
		rt := routeFor(r.URL.Path)
		// A little latency, so the access log reads like a real one.
		time.Sleep(time.Duration(seq%7) * 700 * time.Microsecond)
		if rt.status == 302 {
			w.Header().Set("Location", "/")
		}
		w.WriteHeader(rt.status)
		io.WriteString(w, rt.body)
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		ua := r.UserAgent()
		if ua == "" {
			ua = "-"
		}
		o.printf(`%s - - [%s] "%s %s %s" %d %d "-" %q %.1fms`, host, t0.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			r.Method, r.URL.RequestURI(), r.Proto, rt.status, len(rt.body), ua, float64(time.Since(t0).Microseconds())/1000)
		switch {
		case rt.status >= 500:
			e.printf("[vite] Internal server error: Cannot read properties of undefined (reading 'id')")
			e.printf("    at handler (/src/api/crash.ts:%d:17)", 10+seq%30)
		case seq%17 == 0:
			e.printf("warn: slow request %s took %dms", r.URL.Path, 700+seq%500)
		case seq%29 == 0:
			o.printf("[vite] hmr update /src/App.tsx")
		}
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ErrorLog: nil}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		srv.Shutdown(sctx)
		cancel()
		mu.Lock()
		o.printf("dev server stopped after %s (%d requests)", time.Since(began).Round(time.Second), n)
		mu.Unlock()
		return nil
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// BuildOptions configure Build.
type BuildOptions struct {
	Target   string        // what is built (display only); default "./cmd/api"
	Duration time.Duration // about how long the build runs; default 30 s
	ExitCode int           // exit code at the end; 0 prints a passing test run instead of a failing build
	Seed     uint64        // varies the package names and timing
}

var buildPkgs = []string{
	"internal/config", "internal/store", "internal/store/migrate", "internal/auth", "internal/auth/oidc",
	"internal/api", "internal/api/middleware", "internal/queue", "internal/queue/retry", "internal/mail",
	"internal/search", "internal/search/index", "pkg/log", "pkg/metrics", "pkg/httpx", "pkg/cache",
	"internal/billing", "internal/billing/stripe", "internal/web", "internal/web/assets", "cmd/api",
}

// Build prints a build's progress over about opts.Duration — compiled
// packages and percentages on out, deprecation warnings on errOut — and
// returns opts.ExitCode: with the default 2 it ends in a type error, like a
// CI build that fails; with 0 it is a passing `go test` run. It returns early
// (code 130) when ctx is done.
func Build(ctx context.Context, opts BuildOptions, out, errOut io.Writer) int {
	o, e := &lineWriter{w: out}, &lineWriter{w: errOut}
	if opts.Target == "" {
		opts.Target = "./cmd/api"
	}
	if opts.Duration <= 0 {
		opts.Duration = 30 * time.Second
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x6275696c64))
	steps := len(buildPkgs)
	step := opts.Duration / time.Duration(steps+2)
	testing := opts.ExitCode == 0
	if testing {
		o.printf("$ go test -count=1 ./...")
	} else {
		o.printf("$ go build -trimpath -o bin/api %s", opts.Target)
		o.printf("go: downloading github.com/jackc/pgx/v5 v5.7.1")
		o.printf("go: downloading golang.org/x/sync v0.10.0")
	}
	if !sleep(ctx, step) {
		return 130
	}
	for i, pkg := range buildPkgs {
		if testing {
			o.printf("ok  \texample.com/demo/%s\t%.3fs", pkg, 0.05+rng.Float64()*1.4)
		} else {
			o.printf("[%3d%%] compiling example.com/demo/%s", (i+1)*100/steps, pkg)
		}
		if !testing && (i == 4 || i == 13) {
			e.printf("%s/%s.go:%d:2: warning: ioutil.ReadAll is deprecated: use io.ReadAll", pkg, path.Base(pkg), 20+rng.IntN(200))
		}
		if !testing && i == 9 {
			e.printf("warning: GOFLAGS=-mod=mod overrides vendor directory")
		}
		d := step/2 + time.Duration(rng.Int64N(int64(step)+1))
		if !sleep(ctx, d) {
			return 130
		}
	}
	if testing {
		o.printf("PASS")
		o.printf("ok  \texample.com/demo\t(%d packages)", steps)
		return 0
	}
	e.printf("# example.com/demo/internal/billing/stripe")
	e.printf("internal/billing/stripe/webhook.go:88:14: cannot use evt.Data (variable of type json.RawMessage) as *Event value in argument to handle")
	e.printf("internal/billing/stripe/webhook.go:91:2: too many return values")
	o.printf("build failed: 2 errors in example.com/demo/internal/billing/stripe (exit status %d)", opts.ExitCode)
	return opts.ExitCode
}

// secretParts builds the fake secrets at run time from pieces, so no
// secret-shaped literal sits in the source for scanners to trip on. Every
// value is fake (the AWS pair is AWS's own documentation example).
type fakeSecrets struct {
	openAI, awsID, awsSecret, pgPass, jwt, github, stripe, slackPath string
	pem                                                              []string
}

func makeSecrets() fakeSecrets {
	b64 := "MIIEowIBAAKCAQEAq7BFUq8dEmoKeyN0tReaLcLaWpItDeMoOnLyQ2xw9vT5hYk"
	s := fakeSecrets{
		openAI:    "sk" + "-proj-" + "Dm0x8Qw3nTz4Lr7Pa2Vb6Yc9Ke1Hs5Jd",
		awsID:     "AK" + "IA" + "IOSFODNN7EXAMPLE",
		awsSecret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
		pgPass:    "hunter2-" + "Sup3rS3cret",
		jwt: "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." +
			"eyJzdWIiOiJkZW1vLWRlcGxveSIsInJvbGUiOiJhZG1pbiJ9" + "." + "c2lnbmF0dXJlLWRlbW8tbm90LXJlYWw",
		github:    "gh" + "p_" + "Dem0T0kenN0tRealAbCdEfGhIjKlMnOpQrSt",
		stripe:    "sk" + "_live_" + "51DemoNotRealKey00abcdef",
		slackPath: "T0DEMO000/B0DEMO000/" + "XyZdemoNotRealWebhook",
	}
	for i := 0; i < 4; i++ {
		line := b64[i*3:] + b64[:i*3]
		s.pem = append(s.pem, line)
	}
	return s
}

// SecretLines returns the output of the secrets helper before its heartbeat:
// normal deploy chatter mixed with fake secrets of several docs/contract.md "Background jobs: Live, redacted log" kinds
// (env key, prefixed tokens, AWS key pair, connection-string password,
// Bearer JWT, Slack webhook, a PEM private key across lines). Lines starting
// with "[stderr] " go to stderr without that prefix.
func SecretLines() []string {
	s := makeSecrets()
	lines := []string{
		"deploy: loading environment from .env.production",
		"export OPENAI_API_KEY=" + s.openAI,
		"export AWS_ACCESS_KEY_ID=" + s.awsID,
		"export AWS_SECRET_ACCESS_KEY=" + s.awsSecret,
		"deploy: connecting to postgres://deploy:" + s.pgPass + "@db.internal:5432/app?sslmode=require",
		"deploy: GET https://api.example.com/v1/me -H 'Authorization: Bearer " + s.jwt + "'",
		"[stderr] warning: GITHUB_TOKEN=" + s.github + " has scopes repo, workflow (more than needed)",
		`deploy: payment config {"provider":"stripe","api_key":"` + s.stripe + `","mode":"live"}`,
		"deploy: notifying https://hooks.slack.com/services/" + s.slackPath,
		"deploy: writing deploy key to ~/.ssh/deploy_ed25519",
		"-----BEGIN RSA PRIVATE KEY-----",
	}
	lines = append(lines, s.pem...)
	lines = append(lines,
		"-----END RSA PRIVATE KEY-----",
		"deploy: rollout started (5 replicas)",
	)
	return lines
}

// PlantedSecrets returns the secret values SecretLines plants: none of them
// may reach a job log or the screen unredacted (docs/contract.md "Background jobs: Live, redacted log").
func PlantedSecrets() []string {
	s := makeSecrets()
	out := []string{s.openAI, s.awsID, s.awsSecret, s.pgPass, s.jwt, s.github, s.stripe, s.slackPath}
	return append(out, s.pem...)
}

// Secrets prints SecretLines (stdout, and stderr for "[stderr] " lines) a
// line every few hundred milliseconds, then a rollout heartbeat every
// heartbeat (default 2 s) until ctx is done.
func Secrets(ctx context.Context, heartbeat time.Duration, out, errOut io.Writer) {
	o, e := &lineWriter{w: out}, &lineWriter{w: errOut}
	if heartbeat <= 0 {
		heartbeat = 2 * time.Second
	}
	for _, l := range SecretLines() {
		if rest, ok := strings.CutPrefix(l, "[stderr] "); ok {
			e.printf("%s", rest)
		} else {
			o.printf("%s", l)
		}
		if !sleep(ctx, 150*time.Millisecond) {
			return
		}
	}
	for n := 1; ; n++ {
		if !sleep(ctx, heartbeat) {
			return
		}
		healthy := n % 6
		if healthy == 0 {
			healthy = 5
		}
		o.printf("deploy: waiting for rollout (%d/5 replicas healthy, check #%d)", healthy, n)
		if n%5 == 0 {
			e.printf("warn: replica api-%d readiness probe failed: HTTP 503", n%5+1)
		}
	}
}

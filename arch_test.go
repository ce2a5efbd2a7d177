package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The import rules of docs/architecture.md that a plain build does not
// enforce: Go refuses import cycles, not imports that run sideways.

const modulePath = "github.com/clawpit/clawpit"

// moduleImports maps each package of the module (its import path) to the
// packages its .go files import, every build tag included, and its test
// files' imports too when tests.
// Directories Go skips (testdata, names starting with "." or "_") and
// nested modules (third_party/…) are left out. Files are parsed up to their
// imports only.
func moduleImports(t *testing.T, tests bool) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	walkGoFiles(t, tests, parser.ImportsOnly, func(dir string, _ *token.FileSet, f *ast.File) {
		pkg := modulePath
		if dir != "." {
			pkg += "/" + dir
		}
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(out[pkg], imp) {
				out[pkg] = append(out[pkg], imp)
			}
		}
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
	})
	if _, ok := out[modulePath+"/tui"]; !ok {
		t.Fatal("the walk found no package tui: run from the module's root")
	}
	return out
}

// inRoom reports whether pkg is room or one of its sub-packages.
func inRoom(pkg, room string) bool {
	return pkg == room || strings.HasPrefix(pkg, room+"/")
}

// TestOnlyTheConsoleImportsTui: the console (tui) is imported by the
// commands that start it (internal/cli, internal/serve, the root package)
// and by the console's own benchmark, nothing else; a registry's feed
// (feed.Source, as adapters/openclaw implements it) needs no screen.
func TestOnlyTheConsoleImportsTui(t *testing.T) {
	allowed := []string{
		modulePath, // main, which starts the console
		modulePath + "/tui",
		modulePath + "/internal/cli",
		modulePath + "/internal/serve",
		// bench/p9 measures the console itself: it drives tui.New's model
		// the way Bubble Tea does, keystroke by keystroke.
		modulePath + "/bench/p9",
	}
	var bad []string
	for pkg, imps := range moduleImports(t, true) {
		if slices.ContainsFunc(allowed, func(room string) bool {
			return pkg == room || room == modulePath+"/tui" && inRoom(pkg, room)
		}) {
			continue
		}
		for _, imp := range imps {
			if inRoom(imp, modulePath+"/tui") {
				bad = append(bad, pkg+" imports "+imp)
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// TestFeedKnowsNoScreen: the feed package imports nothing of Bubble Tea
// or lipgloss, and its code (tests aside, which open real registries)
// imports of clawpit's only core and view: it lies below the console.
func TestFeedKnowsNoScreen(t *testing.T) {
	const feedPkg = modulePath + "/feed"
	for _, tests := range []bool{false, true} {
		imps, ok := moduleImports(t, tests)[feedPkg]
		if !ok {
			t.Fatal("no package feed")
		}
		for _, imp := range imps {
			switch {
			case strings.HasPrefix(imp, "github.com/charmbracelet/"):
				t.Errorf("feed imports %s (a screen library)", imp)
			case !tests && inRoom(imp, modulePath) && imp != modulePath+"/core" && imp != modulePath+"/view":
				t.Errorf("feed imports %s (of clawpit's, only core and view)", imp)
			}
		}
	}
}

// TestViewLiesBelowConsoleAndStore: package view, which declares each
// entity's sorts, ranks and searchable fields for the console and the store
// alike, imports of clawpit's only core and nothing of a screen or of SQL.
func TestViewLiesBelowConsoleAndStore(t *testing.T) {
	const viewPkg = modulePath + "/view"
	imps, ok := moduleImports(t, false)[viewPkg]
	if !ok {
		t.Fatal("no package view")
	}
	for _, imp := range imps {
		switch {
		case strings.HasPrefix(imp, "github.com/charmbracelet/"), strings.HasPrefix(imp, "charm.land/"), imp == "database/sql":
			t.Errorf("view imports %s (a screen or SQL)", imp)
		case inRoom(imp, modulePath) && imp != modulePath+"/core":
			t.Errorf("view imports %s (of clawpit's, only core)", imp)
		}
	}
}

// TestOnlyTheSupervisorControlsProcesses: process control (system calls,
// starting processes, signals) lives in package supervisor; core, which
// holds the rules and the registry, imports none of it, so that a rule can
// be read and tested without a process table. Only core's code is held to
// it: its tests start real supervisors (and import the supervisor) to
// check the rules against them.
func TestOnlyTheSupervisorControlsProcesses(t *testing.T) {
	const corePkg = modulePath + "/core"
	imps, ok := moduleImports(t, false)[corePkg]
	if !ok {
		t.Fatal("no package core")
	}
	for _, imp := range imps {
		switch {
		case imp == "syscall", imp == "os/exec", imp == "os/signal", inRoom(imp, "golang.org/x/sys"):
			t.Errorf("core imports %s: process control belongs in supervisor", imp)
		case inRoom(imp, modulePath+"/supervisor"):
			t.Errorf("core imports %s: the supervisor lies above core", imp)
		}
	}
}

// TestFixturesStayInTests: the registry fixture (internal/registrytest)
// opens a store, which core's code may not import; core's tests and
// maintain/sweep's share it, so only test files import it. A package's
// code that did would carry a fake clock and a fake job controller into
// the binary.
func TestFixturesStayInTests(t *testing.T) {
	const fixture = modulePath + "/internal/registrytest"
	code := moduleImports(t, false)
	if _, ok := code[fixture]; !ok {
		t.Fatal("no package internal/registrytest")
	}
	var bad []string
	for pkg, imps := range code {
		if slices.Contains(imps, fixture) {
			bad = append(bad, pkg+" imports "+fixture+" outside its tests")
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// walkGoFiles calls fn with every .go file of the module (test files too
// when tests), parsed with mode, and its directory relative to the root
// (slash-separated, "." for the root). testdata, hidden and _ directories
// and nested modules (third_party/…) are left out.
func walkGoFiles(t *testing.T, tests bool, mode parser.Mode, fn func(dir string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if path != "." {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || !tests && strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(filepath.Dir(path)), fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

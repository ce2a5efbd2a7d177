package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The maintenance rule of docs/architecture.md ("Maintenance"): one
// service (package maintain) schedules the sweeps of every process and
// builds every sweeper, so no command keeps a sweep loop or a sweeper
// configuration of its own.

// walkCode calls fn with every non-test .go file of the module, parsed
// whole, and its directory relative to the root (slash-separated, "." for
// the root). Directories Go skips and nested modules are left out.
func walkCode(t *testing.T, fn func(dir string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	walkGoFiles(t, false, parser.SkipObjectResolution, fn)
}

// maintenanceExempt: the service itself, the rules it runs (package
// maintain/sweep, which implements the passes and calls its own), and the
// benchmarks, which measure one sweeper's passes back to back on purpose.
func maintenanceExempt(dir string) bool {
	return dir == "maintain" || strings.HasPrefix(dir, "maintain/") || dir == "bench" || strings.HasPrefix(dir, "bench/")
}

// TestOnlyTheServiceBuildsSweepers: sweep.New is called by package
// maintain alone (maintain.NewSweeper), so a setting derived from the
// schedule (HostStaleAfter) cannot be forgotten by one process.
func TestOnlyTheServiceBuildsSweepers(t *testing.T) {
	var bad []string
	found := false
	walkCode(t, func(dir string, fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "New" {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "sweep" {
				return true
			}
			if dir == "maintain" {
				found = true
			} else if !maintenanceExempt(dir) {
				bad = append(bad, fset.Position(sel.Pos()).String()+": sweep.New outside package maintain (use maintain.NewSweeper)")
			}
			return true
		})
	})
	if !found {
		t.Fatal("package maintain calls no sweep.New: run from the module's root")
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// TestOnlyMaintainSchedulesPasses: a sweep or watchdog pass runs when
// package maintain's timetable says so, and nowhere else decides it.
// Outside maintain (and maintain/sweep, which implements the passes, and
// the benchmarks), the code may name a pass (a method or a function field
// called Sweep or Watchdog, of any type: *sweep.Sweeper's, the console's
// tui.Maintenance, maintain.Service's own fields) in four places only:
//
//   - handed to maintain: as the Sweep or Watchdog of a maintain.Service
//     literal, which calls it on the schedule;
//   - in the console's model, inside `if sched.Start(maintain.KindSweep,
//     now) { … }` (KindWatchdog for a watchdog pass), sched a
//     *maintain.Schedule: the model runs what its schedule started;
//   - in a wrapper of a pass: a method named like the pass it calls
//     (the console's adapter over the sweeper, serve's role check, the
//     spool fold before a sweep), which adds no timing of its own;
//   - in oneShot below: the one command that runs a single pass and exits.
//
// A ticker's callback, a time.AfterFunc, a Bubble Tea tick or a loop that
// ran a pass of its own would name the pass anywhere else, and fail here.
// The calls are resolved with go/types (the packages' export data from
// `go list -export`), so a method value (`go f(mt.Watchdog)`) counts as
// much as a call.
func TestOnlyMaintainSchedulesPasses(t *testing.T) {
	oneShot := map[string]bool{
		// `clawpit sweep` and `clawpit --sweep-once`: one pass, then exit.
		modulePath + "/internal/cli.runSweepOnce": true,
	}
	mod := loadTypedModule(t)
	maint, err := mod.imp.Import(modulePath + "/maintain")
	if err != nil {
		t.Fatal(err)
	}
	kindOf := map[string]constant.Value{}
	for pass, name := range map[string]string{"Sweep": "KindSweep", "Watchdog": "KindWatchdog"} {
		c, ok := maint.Scope().Lookup(name).(*types.Const)
		if !ok {
			t.Fatalf("package maintain declares no constant %s", name)
		}
		kindOf[pass] = c.Val()
	}
	isMaintain := func(obj types.Object, name string) bool {
		return obj != nil && obj.Pkg() != nil && obj.Pkg().Path() == modulePath+"/maintain" && obj.Name() == name
	}
	// scheduled reports whether cond is sched.Start(k, …) of a
	// *maintain.Schedule with k the kind of pass.
	scheduled := func(info *types.Info, cond ast.Expr, pass string) bool {
		call, ok := ast.Unparen(cond).(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return false
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		s := info.Selections[sel]
		if s == nil || s.Kind() != types.MethodVal || s.Obj().Name() != "Start" || !isMaintain(namedOf(s.Recv()), "Schedule") {
			return false
		}
		tv, ok := info.Types[call.Args[0]]
		return ok && tv.Value != nil && constant.Compare(tv.Value, token.EQL, kindOf[pass])
	}

	var bad []string
	checked := 0
	seen := map[string]int{} // allowed place → passes named there
	for _, p := range mod.pkgs {
		if maintenanceExempt(p.dir) {
			continue
		}
		checked++
		for _, f := range p.files {
			var stack []ast.Node
			var fn *ast.FuncDecl
			ast.Inspect(f, func(n ast.Node) bool {
				if n == nil {
					stack = stack[:len(stack)-1]
					return true
				}
				stack = append(stack, n)
				if d, ok := n.(*ast.FuncDecl); ok {
					fn = d
				}
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				s := p.info.Selections[sel]
				pass := sel.Sel.Name
				if s == nil || pass != "Sweep" && pass != "Watchdog" {
					return true
				}
				if _, isFunc := s.Type().(*types.Signature); !isFunc && s.Kind() == types.FieldVal {
					return true // a field holding no function is no pass
				}
				if place := passPlace(p, fn, stack, sel, pass, oneShot, isMaintain, scheduled); place != "" {
					seen[place]++
					return true
				}
				bad = append(bad, fmt.Sprintf("%s: %s names the %s pass %s.%s outside maintain's schedule: hand it to maintain.Service, or run it when a maintain.Schedule's Start says it is due",
					p.fset.Position(sel.Pos()), funcName(p.path, fn), strings.ToLower(pass), types.TypeString(s.Recv(), types.RelativeTo(p.types)), pass))
				return true
			})
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d packages: run from the module's root", checked)
	}
	// Each allowed place is in use today: one the test no longer
	// recognises (a renamed Schedule.Start, say) fails here rather than
	// leaving the rule to check nothing.
	for _, place := range []string{"one-shot", "wrapper", "service", "schedule"} {
		if seen[place] == 0 {
			t.Errorf("no pass named in the %s place: the test no longer sees the code it checks", place)
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// passPlace is which of the places TestOnlyMaintainSchedulesPasses
// allows the pass sel stands in (inside fn, stack its path from the file
// down to sel): "one-shot", "wrapper", "service" or "schedule"; "" for
// none.
func passPlace(p typedPackage, fn *ast.FuncDecl, stack []ast.Node, sel *ast.SelectorExpr, pass string, oneShot map[string]bool,
	isMaintain func(types.Object, string) bool, scheduled func(*types.Info, ast.Expr, string) bool) string {
	if fn != nil && oneShot[funcName(p.path, fn)] {
		return "one-shot"
	}
	// A wrapper: method Sweep calling the Sweep it wraps.
	if fn != nil && fn.Recv != nil && fn.Name.Name == pass && len(stack) >= 2 {
		if call, ok := stack[len(stack)-2].(*ast.CallExpr); ok && call.Fun == sel {
			return "wrapper"
		}
	}
	// Handed to maintain: maintain.Service{Sweep: x.Sweep}.
	if len(stack) >= 3 {
		kv, ok := stack[len(stack)-2].(*ast.KeyValueExpr)
		lit, ok2 := stack[len(stack)-3].(*ast.CompositeLit)
		if ok && ok2 && kv.Value == sel {
			key, _ := kv.Key.(*ast.Ident)
			if key != nil && key.Name == pass && isMaintain(namedOf(p.info.TypeOf(lit)), "Service") {
				return "service"
			}
		}
	}
	// Started by the console's schedule: inside if sched.Start(kind, now) { … }.
	for i := len(stack) - 2; i >= 0; i-- {
		if ifs, ok := stack[i].(*ast.IfStmt); ok && stack[i+1] == ifs.Body && scheduled(p.info, ifs.Cond, pass) {
			return "schedule"
		}
	}
	return ""
}

// namedOf is the type name of t (through one pointer), or nil.
func namedOf(t types.Type) types.Object {
	if t == nil {
		return nil
	}
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj()
	}
	return nil
}

// funcName is "pkg.Func" or "pkg.Type.Method" of fn ("pkg" alone outside
// any function).
func funcName(pkg string, fn *ast.FuncDecl) string {
	if fn == nil {
		return pkg
	}
	if fn.Recv != nil && len(fn.Recv.List) == 1 {
		rt := fn.Recv.List[0].Type
		if st, ok := rt.(*ast.StarExpr); ok {
			rt = st.X
		}
		if ix, ok := rt.(*ast.IndexExpr); ok {
			rt = ix.X
		}
		if id, ok := rt.(*ast.Ident); ok {
			return pkg + "." + id.Name + "." + fn.Name.Name
		}
	}
	return pkg + "." + fn.Name.Name
}

// typedPackage is one of the module's packages (its code, tests aside),
// type-checked.
type typedPackage struct {
	path  string // import path
	dir   string // relative to the module's root, slash-separated ("." for the root)
	fset  *token.FileSet
	files []*ast.File
	info  *types.Info
	types *types.Package
}

// typedModule is the module's packages and the importer that resolved
// their imports.
type typedModule struct {
	pkgs []typedPackage
	imp  types.Importer
}

// loadTypedModule type-checks every package of the module as built with
// the sqlite_fts5 tag (what the module's builds and tests use): `go list`
// names each package's files and builds the export data of its imports,
// which go/types reads (the gc importer). Packages of nested modules
// (third_party/…) are not the module's.
func loadTypedModule(t *testing.T) typedModule {
	t.Helper()
	// go test puts its own Go first on PATH.
	cmd := exec.Command("go", "list", "-deps", "-export", "-tags", "sqlite_fts5",
		"-json=ImportPath,Dir,GoFiles,Export,Module,Error", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	type listed struct {
		ImportPath, Dir, Export string
		GoFiles                 []string
		Module                  *struct{ Path string }
		Error                   *struct{ Err string }
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	exports := map[string]string{}
	var own []listed
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Error != nil {
			t.Fatalf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && p.Module.Path == modulePath {
			own = append(own, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	mod := typedModule{imp: imp}
	for _, p := range own {
		dir, err := filepath.Rel(root, p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		tp := typedPackage{path: p.ImportPath, dir: filepath.ToSlash(dir), fset: fset, info: &types.Info{
			Types:      map[ast.Expr]types.TypeAndValue{},
			Selections: map[*ast.SelectorExpr]*types.Selection{},
		}}
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			tp.files = append(tp.files, f)
		}
		conf := types.Config{Importer: imp}
		if tp.types, err = conf.Check(p.ImportPath, fset, tp.files, tp.info); err != nil {
			t.Fatalf("type-check %s: %v", p.ImportPath, err)
		}
		mod.pkgs = append(mod.pkgs, tp)
	}
	return mod
}

// TestSweepRulesOutsideCore: core holds the registry, not its
// maintenance. The sweep rules (a type with a Sweep or Watchdog pass, the
// rule names a sweep reports) are declared in package maintain/sweep
// alone; core gives them the registry's operations and queries.
func TestSweepRulesOutsideCore(t *testing.T) {
	var bad []string
	found := false
	walkCode(t, func(dir string, fset *token.FileSet, f *ast.File) {
		if dir != "core" && dir != "maintain/sweep" {
			return
		}
		for _, d := range f.Decls {
			var name string
			var pos token.Pos
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && (d.Name.Name == "Sweep" || d.Name.Name == "Watchdog") {
					name, pos = "method "+d.Name.Name, d.Pos()
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					if vs, ok := sp.(*ast.ValueSpec); ok && d.Tok == token.CONST {
						for _, n := range vs.Names {
							if strings.HasPrefix(n.Name, "Rule") {
								name, pos = "rule name "+n.Name, n.Pos()
							}
						}
					}
				}
			}
			if name == "" {
				continue
			}
			if dir == "maintain/sweep" {
				found = true
			} else {
				bad = append(bad, fset.Position(pos).String()+": core declares a sweep "+name+": the rules live in maintain/sweep")
			}
		}
	})
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	if !found {
		t.Error("package maintain/sweep declares no sweep: run from the module's root")
	}
}

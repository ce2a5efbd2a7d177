package main

import (
	"go/ast"
	"go/parser"
	"go/token"
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
// maintain/sweep, which loops over a sweep's batches), and the
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

// TestNoOwnSweepLoop: outside package maintain, no loop calls a sweep or
// a watchdog pass (a method named Sweep or Watchdog, any case): a process
// that sweeps periodically runs maintain.Service. maintain/sweep, which
// implements the passes (and loops over a sweep's batches), is not a
// scheduler.
// The console's model (tui) has no loop: it runs its passes as Bubble Tea
// commands when its maintain.Schedule says they are due.
func TestNoOwnSweepLoop(t *testing.T) {
	var bad []string
	walkCode(t, func(dir string, fset *token.FileSet, f *ast.File) {
		if maintenanceExempt(dir) {
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			switch l := n.(type) {
			case *ast.ForStmt:
				body = l.Body
			case *ast.RangeStmt:
				body = l.Body
			default:
				return true
			}
			ast.Inspect(body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if ok && (strings.EqualFold(sel.Sel.Name, "Sweep") || strings.EqualFold(sel.Sel.Name, "Watchdog")) {
					bad = append(bad, fset.Position(call.Pos()).String()+": a loop calls ."+sel.Sel.Name+": schedule maintenance with maintain.Service")
				}
				return true
			})
			return false // the inner walk has seen nested loops
		})
	})
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
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

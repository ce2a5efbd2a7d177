// Command house prints the size and complexity figures of clawpit's own
// code (non-test .go files outside bench/, third_party/ and testdata/):
// files over 800 lines, functions over 100 lines, functions over
// cyclomatic complexity 30 (gocyclo's measure) and the mean cyclomatic
// complexity per function. The targets it checks against are the house
// rules in docs/architecture.md; it exits 1 when one is missed and -check
// is given.
//
//	go run -tags sqlite_fts5 ./bench/house [-check] [-list] [dir]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fzipp/gocyclo"
)

// Targets (docs/architecture.md, "House rules").
const (
	maxFileLines  = 800 // a file over this many lines is counted
	maxFilesOver  = 2   // at most this many such files
	maxFuncLines  = 100 // no function over this many lines
	maxCyclo      = 30  // a function over this cyclomatic complexity is counted
	maxCycloFuncs = 3   // at most this many such functions
)

type item struct {
	n    int
	name string
}

func main() {
	check := flag.Bool("check", false, "exit 1 when a target is missed")
	list := flag.Bool("list", false, "list each file and function over its bound")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	files, err := sourceFiles(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "house:", err)
		os.Exit(2)
	}
	fset := token.NewFileSet()
	var bigFiles, longFuncs []item
	var stats gocyclo.Stats
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			fmt.Fprintln(os.Stderr, "house:", err)
			os.Exit(2)
		}
		if n := fset.Position(f.End()).Line; n > maxFileLines {
			bigFiles = append(bigFiles, item{n, path})
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
				longFuncs = append(longFuncs, item{n, path + " " + fd.Name.Name})
			}
		}
		stats = gocyclo.AnalyzeASTFile(f, fset, stats)
	}
	var sum int
	nfun := len(stats)
	for _, s := range stats {
		sum += s.Complexity
	}
	stats = stats.SortAndFilter(-1, maxCyclo)
	byN := func(s []item) { sort.Slice(s, func(i, j int) bool { return s[i].n > s[j].n }) }
	byN(bigFiles)
	byN(longFuncs)
	mean := 0.0
	if nfun > 0 {
		mean = float64(sum) / float64(nfun)
	}
	fmt.Printf("files: %d, functions: %d, mean cyclomatic %.2f\n", len(files), nfun, mean)
	ok := true
	report := func(what string, got, limit int, items []string) {
		mark := "ok"
		if got > limit {
			mark, ok = "MISSED", false
		}
		fmt.Printf("%-34s %4d  (target ≤ %d)  %s\n", what, got, limit, mark)
		if *list {
			for _, s := range items {
				fmt.Println("    " + s)
			}
		}
	}
	var s []string
	for _, it := range bigFiles {
		s = append(s, fmt.Sprintf("%5d  %s", it.n, it.name))
	}
	report(fmt.Sprintf("files over %d lines", maxFileLines), len(bigFiles), maxFilesOver, s)
	s = nil
	for _, it := range longFuncs {
		s = append(s, fmt.Sprintf("%5d  %s", it.n, it.name))
	}
	report(fmt.Sprintf("functions over %d lines", maxFuncLines), len(longFuncs), 0, s)
	s = nil
	for _, st := range stats {
		s = append(s, fmt.Sprintf("%5d  %s %s", st.Complexity, st.Pos.Filename, st.FuncName))
	}
	report(fmt.Sprintf("functions over cyclomatic %d", maxCyclo), len(stats), maxCycloFuncs, s)
	if *check && !ok {
		os.Exit(1)
	}
}

// sourceFiles lists the non-test .go files under root, skipping bench/,
// third_party/, testdata/ and hidden directories.
func sourceFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "bench" || name == "third_party" || name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			out = append(out, path)
		}
		return nil
	})
	return out, err
}

package e2e

// TestDocsStandAlone: the repository documents itself. No Markdown or Go
// file of the project sends the reader to a file outside it (the team's
// SPEC, the shared folder), and every relative link resolves: the file exists and, for
// a #fragment, the target has a heading with that anchor (GitHub's rule:
// lower case, punctuation but '-' dropped, spaces to '-').

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	mdLink      = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdOutside   = regexp.MustCompile(`\bSPEC\b|\.\./shared|shared/SPEC`)
	mdHeading   = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	mdAnchorOut = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

func mdAnchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(text, -1) {
		h := strings.ToLower(strings.ReplaceAll(m[1], "`", ""))
		h = mdAnchorOut.ReplaceAllString(h, "")
		out[strings.ReplaceAll(h, " ", "-")] = true
	}
	return out
}

func TestDocsStandAlone(t *testing.T) {
	var files []string
	// Paths relative to the repository's root: they name the file in the
	// errors and keep the exclusions below readable.
	root := os.DirFS(repoRoot)
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() && p == "third_party" {
			return filepath.SkipDir // others' code, as they wrote it
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".go") && p != "e2e/docs_test.go" && p != "e2e/ux_cli_test.go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		b, err := fs.ReadFile(root, f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for i, l := range strings.Split(text, "\n") {
			if mdOutside.MatchString(l) { // in Markdown, and in Go's comments and strings
				t.Errorf("%s:%d refers to a document outside the repository: %q", f, i+1, l)
			}
		}
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := f
			if file != "" {
				path = filepath.Join(filepath.Dir(f), file)
			}
			st, err := os.Stat(inRepo(path))
			if err != nil {
				t.Errorf("%s: link %q: %v", f, target, err)
				continue
			}
			if frag == "" || st.IsDir() || !strings.HasSuffix(path, ".md") {
				continue
			}
			tb, err := os.ReadFile(inRepo(path))
			if err != nil {
				t.Fatal(err)
			}
			if !mdAnchors(string(tb))[frag] {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s", f, target, path, frag)
			}
		}
	}
}

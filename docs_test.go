package agentloop_test

import (
	"errors"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Every relative link in the repository's Markdown resolves: the file it
// names exists, and so does the heading its #fragment names (as GitHub
// makes anchors from headings).
func TestDocsLinksResolve(t *testing.T) {
	files := repoFiles(t, ".md")
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		a := headingAnchors(string(b))
		anchors[path] = a
		return a
	}
	checked := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range markdownLinks(string(b)) {
			if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
				continue // http:, https:, mailto:
			}
			path, frag, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link to %s: no such file", file, target)
					continue
				}
			}
			checked++
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if !anchorsOf(dest)[frag] {
				t.Errorf("%s: link to %s: %s has no heading with anchor #%s", file, target, dest, frag)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d relative links checked in %d files: is the walk right?", checked, len(files))
	}
}

var (
	linkRE    = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	fenceRE   = regexp.MustCompile("(?ms)^```.*?^```")
	headingRE = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	dropRE    = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
)

// markdownLinks returns the targets of the links outside code blocks.
// No file carries a merge's conflict markers: Go would not compile with
// them, but Markdown, scripts and data files would ship them unnoticed (a
// merge once committed them into docs/api.md).
func TestNoConflictMarkers(t *testing.T) {
	for _, file := range repoFiles(t, ".md", ".go", ".sh", ".ts", ".mjs", ".json", ".yml", ".yaml", ".conf") {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "<<<<<<< ") || strings.HasPrefix(line, ">>>>>>> ") || line == "|||||||" {
				t.Errorf("%s:%d: a merge's conflict marker: %q", file, i+1, line)
			}
		}
	}
}

// repoFiles lists the repository's files with one of the endings, but for
// what git ignores and test data.
func repoFiles(t *testing.T, endings ...string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", ".demo", ".stack", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		for _, e := range endings {
			if strings.HasSuffix(path, e) {
				files = append(files, path)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func markdownLinks(md string) []string {
	var out []string
	for _, m := range linkRE.FindAllStringSubmatch(fenceRE.ReplaceAllString(md, ""), -1) {
		out = append(out, m[1])
	}
	return out
}

// headingAnchors returns GitHub's anchors of a document's headings:
// lower case, punctuation dropped, spaces as hyphens, repeats numbered.
func headingAnchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range headingRE.FindAllStringSubmatch(fenceRE.ReplaceAllString(md, ""), -1) {
		a := strings.ReplaceAll(dropRE.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// Every package keeps its map in doc.go: "Package name ..." for a library,
// "Command name ..." for a program, as the standard library writes them.
func TestEveryPackageHasDocGo(t *testing.T) {
	dirs := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch name := d.Name(); {
			case name == "testdata" || name == "node_modules", path != "." && strings.HasPrefix(name, "."):
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 20 {
		t.Fatalf("only %d package directories found: is the walk right?", len(dirs))
	}
	for dir := range dirs {
		if _, err := build.ImportDir(dir, 0); err != nil {
			var none *build.NoGoError
			if errors.As(err, &none) {
				continue // only files built on their own, such as go:generate's
			}
			t.Errorf("%s: %v", dir, err)
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, "doc.go"), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		want := "Package " + f.Name.Name + " "
		if f.Name.Name == "main" {
			want = "Command " + filepath.Base(dir) + " "
		}
		if doc := f.Doc.Text(); !strings.HasPrefix(doc, want) {
			t.Errorf("%s/doc.go: the package comment should begin %q, not %q", dir, want, strings.SplitN(doc, "\n", 2)[0])
		}
	}
}

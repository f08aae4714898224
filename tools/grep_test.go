package tools

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestGrep(t *testing.T) {
	var many strings.Builder
	for i := 1; i <= 150; i++ {
		fmt.Fprintf(&many, "hit %d\n", i)
	}
	ws := workspaceWith(t, map[string]string{
		"a.go":              "package a\nfunc Foo() {}\n// foo again\n",
		"sub/b.go":          "one\ntwo\nFoo here\nthree\nfour\n",
		"sub/c.txt":         "Foo in text\r\n",
		"sub/d.log":         "Foo in a nested log\n",
		"ignored.log":       "Foo in a log\n",
		"build/out.go":      "Foo built\n",
		".gitignore":        "*.log\nbuild/\n",
		".hidden/h.go":      "Foo hidden\n",
		".git/config":       "Foo in git\n",
		"bin.dat":           "Foo\x00binary",
		"many/m.txt":        many.String(),
		"long/l.txt":        "Foo" + strings.Repeat("z", 600) + "\n",
		"regex/r.txt":       "a.c\nabc\n",
		"nested/.gitignore": "*.tmp\n",
		"nested/n.tmp":      "Foo tmp\n",
		"nested/n.txt":      "Foo nested\n",
	})
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"whole workspace honours .gitignore, skips .git and binaries",
			map[string]any{"pattern": "Foo", "path": ".", "glob": "*.go"},
			".hidden/h.go:1: Foo hidden\na.go:2: func Foo() {}\nsub/b.go:3: Foo here"},
		{"ignore case", map[string]any{"pattern": "foo", "ignoreCase": true, "path": "a.go"},
			"a.go:2: func Foo() {}\na.go:3: // foo again"},
		{"literal", map[string]any{"pattern": "a.c", "literal": true, "path": "regex"}, "r.txt:1: a.c"},
		{"regex", map[string]any{"pattern": "a.c", "path": "regex"}, "r.txt:1: a.c\nr.txt:2: abc"},
		{"context lines", map[string]any{"pattern": "Foo", "path": "sub/b.go", "context": 1.0},
			"b.go-2- two\nb.go:3: Foo here\nb.go-4- three"},
		{"crlf stripped", map[string]any{"pattern": "text$", "path": "sub"}, "c.txt:1: Foo in text"},
		{"parent .gitignore applies to a subdirectory search", map[string]any{"pattern": "Foo", "path": "sub"},
			"b.go:3: Foo here\nc.txt:1: Foo in text"},
		{"nested .gitignore", map[string]any{"pattern": "Foo", "path": "nested"}, "n.txt:1: Foo nested"},
		{"file given directly", map[string]any{"pattern": "two", "path": "sub/b.go"}, "b.go:2: two"},
		{"no matches", map[string]any{"pattern": "nothing-like-this"}, "No matches found"},
		{"match limit", map[string]any{"pattern": "hit", "path": "many", "limit": 2.0},
			"m.txt:1: hit 1\nm.txt:2: hit 2\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern]"},
		{"long lines", map[string]any{"pattern": "Foo", "path": "long"},
			"l.txt:1: Foo" + strings.Repeat("z", 497) + "... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := text(t, NewGrepTool(ReadOptions{}), ws, tc.args)
			if got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", clip(got), tc.want)
			}
		})
	}
	got := text(t, NewGrepTool(ReadOptions{}), ws, map[string]any{"pattern": "hit", "path": "many"})
	wantContains(t, got, "m.txt:100: hit 100\n\n[100 matches limit reached. Use limit=200 for more, or refine pattern]")

	grep := NewGrepTool(ReadOptions{})
	wantContains(t, failure(t, grep, ws, map[string]any{"pattern": "(", "path": "."}), "regex parse error:")
	wantContains(t, failure(t, grep, ws, map[string]any{"pattern": "x", "path": "nope"}), "Path not found: "+filepath.Join(ws, "nope"))
}

func TestGrepByteLimit(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&b, "match %s\n", strings.Repeat("w", 450))
	}
	ws := workspaceWith(t, map[string]string{"w.txt": b.String()})
	got := text(t, NewGrepTool(ReadOptions{}), ws, map[string]any{"pattern": "match", "limit": 200.0})
	wantContains(t, got, "\n\n[50.0KB limit reached]")
}

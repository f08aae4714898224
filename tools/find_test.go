package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	files := map[string]string{
		"a.ts": "", "B.TS": "", "src/x.ts": "", "src/x.spec.ts": "", "src/deep/y.spec.ts": "",
		"node_modules/m.ts": "", ".gitignore": "node_modules/\n*.gen.ts\n", "z.gen.ts": "",
		".config/c.json": "", ".git/HEAD": "", "docs/": "",
	}
	for i := 0; i < 20; i++ {
		files[fmt.Sprintf("many/f%02d.txt", i)] = ""
	}
	ws := workspaceWith(t, files)
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"basename glob at any depth, smart case, gitignore", map[string]any{"pattern": "*.ts"},
			"B.TS\na.ts\nsrc/deep/y.spec.ts\nsrc/x.spec.ts\nsrc/x.ts"},
		{"upper case pattern is case sensitive", map[string]any{"pattern": "*.TS"}, "B.TS"},
		{"path glob", map[string]any{"pattern": "src/**/*.spec.ts"}, "src/deep/y.spec.ts\nsrc/x.spec.ts"},
		{"hidden files", map[string]any{"pattern": "*.json"}, ".config/c.json"},
		{"directories get a slash", map[string]any{"pattern": "doc*"}, "docs/"},
		{"search path", map[string]any{"pattern": "*.ts", "path": "src/deep"}, "y.spec.ts"},
		{"nothing", map[string]any{"pattern": "*.rs"}, "No files found matching pattern"},
		{"limit", map[string]any{"pattern": "*.txt", "path": "many", "limit": 3.0},
			"f00.txt\nf01.txt\nf02.txt\n\n[3 results limit reached. Use limit=6 for more, or refine pattern]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := text(t, NewFindTool(ReadOptions{}), ws, tc.args)
			if got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", clip(got), tc.want)
			}
		})
	}
	find := NewFindTool(ReadOptions{})
	wantContains(t, failure(t, find, ws, map[string]any{"pattern": "*", "path": "nope"}), "Path not found: "+filepath.Join(ws, "nope"))
	wantContains(t, failure(t, find, ws, map[string]any{"pattern": "[", "path": "."}), "Invalid glob pattern: [")
}

func TestFindByteLimit(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 500; i++ {
		files[fmt.Sprintf("%s%03d", strings.Repeat("f", 120), i)] = ""
	}
	got := text(t, NewFindTool(ReadOptions{}), workspaceWith(t, files), map[string]any{"pattern": "*"})
	wantContains(t, got, "\n\n[50.0KB limit reached]")
}

// BenchmarkFind walks a tree of 20,000 files in 2,000 directories, with a
// .gitignore at the top and in every tenth directory, as find "file4.*"
// does (2,000 results, under the byte limit).
func BenchmarkFind(b *testing.B) {
	ws := b.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write(".gitignore", "*.log\nbuild/\n/vendor/\n!keep.log\n")
	for d := range 2000 {
		dir := fmt.Sprintf("pkg%02d/sub%03d", d/100, d%100)
		if d%10 == 0 {
			write(dir+"/.gitignore", "*.tmp\n/generated/\n")
		}
		for f := range 10 {
			write(fmt.Sprintf("%s/file%d.%s", dir, f, []string{"go", "log", "tmp", "txt", "md"}[f%5]), "")
		}
	}
	find := NewFindTool(ReadOptions{})
	for b.Loop() {
		r, err := find.Execute(context.Background(), Call{Args: map[string]any{"pattern": "file4.*", "limit": 100000.0}, Workspace: ws})
		if err != nil {
			b.Fatal(err)
		}
		if n := strings.Count(r.Content[0].Text, "\n") + 1; n != 2000 {
			b.Fatalf("found %d files, want 2000", n)
		}
	}
}

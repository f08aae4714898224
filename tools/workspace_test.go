package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// escapeFixture is a workspace next to a secret directory, with symlinks
// that lead out of it.
func escapeFixture(t *testing.T) (ws, outside string) {
	t.Helper()
	base := t.TempDir()
	ws = filepath.Join(base, "ws")
	outside = filepath.Join(base, "secret")
	must(t, os.MkdirAll(filepath.Join(ws, "inside"), 0o755))
	must(t, os.MkdirAll(outside, 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "key.txt"), []byte("secret text"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "inside", "ok.txt"), []byte("fine text"), 0o644))
	must(t, os.Symlink(filepath.Join(outside, "key.txt"), filepath.Join(ws, "link-file")))
	must(t, os.Symlink(outside, filepath.Join(ws, "link-dir")))
	must(t, os.Symlink("../secret/new.txt", filepath.Join(ws, "dangling")))
	must(t, os.Symlink("inside/ok.txt", filepath.Join(ws, "good-link")))
	return ws, outside
}

func TestEveryToolRefusesPathsOutsideTheWorkspace(t *testing.T) {
	ws, outside := escapeFixture(t)
	reads := ReadOptions{}
	type tc struct {
		tool Tool
		args func(p string) map[string]any
	}
	tools := map[string]tc{
		"read":  {NewReadTool(reads), func(p string) map[string]any { return map[string]any{"path": p} }},
		"write": {NewWriteTool(), func(p string) map[string]any { return map[string]any{"path": p, "content": "x"} }},
		"edit": {NewEditTool(), func(p string) map[string]any {
			return map[string]any{"path": p, "edits": edits("secret", "public")}
		}},
		"ls":   {NewLsTool(reads), func(p string) map[string]any { return map[string]any{"path": p} }},
		"grep": {NewGrepTool(reads), func(p string) map[string]any { return map[string]any{"pattern": "secret", "path": p} }},
		"find": {NewFindTool(reads), func(p string) map[string]any { return map[string]any{"pattern": "*", "path": p} }},
	}
	paths := map[string]string{
		"dot-dot":                   "../secret/key.txt",
		"dot-dot dir":               "../secret",
		"dot-dot in the middle":     "inside/../../secret/key.txt",
		"absolute":                  filepath.Join(outside, "key.txt"),
		"absolute dir":              outside,
		"symlinked file":            "link-file",
		"symlinked dir":             "link-dir",
		"through symlinked dir":     "link-dir/key.txt",
		"new file in symlinked dir": "link-dir/new.txt",
		"dangling symlink out":      "dangling",
		"home":                      "~",
	}
	for toolName, c := range tools {
		for pathName, p := range paths {
			t.Run(toolName+"/"+pathName, func(t *testing.T) {
				got := failure(t, c.tool, ws, c.args(p))
				wantContains(t, got, "is outside the workspace "+ws)
			})
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "key.txt")); string(b) != "secret text" {
		t.Errorf("the file outside was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Errorf("a file was created outside")
	}
}

func TestSymlinksInsideTheWorkspaceWork(t *testing.T) {
	ws, _ := escapeFixture(t)
	wantContains(t, text(t, NewReadTool(ReadOptions{}), ws, map[string]any{"path": "good-link"}), "fine text")
	text(t, NewEditTool(), ws, map[string]any{"path": "good-link", "edits": edits("fine", "good")})
	b, _ := os.ReadFile(filepath.Join(ws, "inside", "ok.txt"))
	if string(b) != "good text" {
		t.Errorf("edit through an inside symlink: %q", b)
	}
}

func TestAllowOutsideReads(t *testing.T) {
	ws, outside := escapeFixture(t)
	open := ReadOptions{AllowOutsideReads: true}
	wantContains(t, text(t, NewReadTool(open), ws, map[string]any{"path": "../secret/key.txt"}), "secret text")
	wantContains(t, text(t, NewLsTool(open), ws, map[string]any{"path": outside}), "key.txt")
	wantContains(t, text(t, NewGrepTool(open), ws, map[string]any{"pattern": "secret", "path": outside}), "key.txt:1: secret text")
	wantContains(t, text(t, NewFindTool(open), ws, map[string]any{"pattern": "*.txt", "path": "link-dir"}), "key.txt")
	// Writes stay confined whatever the read option says.
	builtins := Builtins(BuiltinOptions{AllowOutsideReads: true})
	for _, tool := range builtins {
		if tool.Definition().Name == WriteToolName {
			wantContains(t, failure(t, tool, ws, map[string]any{"path": "../secret/key.txt", "content": "x"}), "is outside the workspace")
		}
	}
}

func TestReadMayOpenBashFullOutput(t *testing.T) {
	ws := t.TempDir()
	outDir := t.TempDir()
	var read, bash Tool
	for _, tool := range Builtins(BuiltinOptions{BashOutputDir: outDir}) {
		switch tool.Definition().Name {
		case ReadToolName:
			read = tool
		case BashToolName:
			bash = tool
		}
	}
	got := text(t, bash, ws, map[string]any{"command": "seq 1 3000"})
	path := got[strings.LastIndex(got, "Full output: ")+len("Full output: ") : len(got)-1]
	wantContains(t, text(t, read, ws, map[string]any{"path": path, "offset": 2999.0}), "2999\n3000")
	// Other files next to it stay out of reach.
	must(t, os.WriteFile(filepath.Join(t.TempDir(), "other.txt"), []byte("x"), 0o644))
	wantContains(t, failure(t, read, ws, map[string]any{"path": "/etc/hostname"}), "is outside the workspace")
}

func TestMissingWorkspace(t *testing.T) {
	for _, tool := range Builtins(BuiltinOptions{}) {
		if tool.Definition().Name == BashToolName {
			continue
		}
		args := map[string]any{"path": "x", "pattern": "x", "content": "x", "edits": edits("a", "b")}
		wantContains(t, failure(t, tool, "", args), "No workspace is set for this call")
	}
}

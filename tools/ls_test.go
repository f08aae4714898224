package tools

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestLs(t *testing.T) {
	ws := workspaceWith(t, map[string]string{
		"b.txt": "", "A.txt": "", ".hidden": "", "dir/": "", "dir/x": "", "empty/": "",
		".gitignore": "b.txt\n", "bin.dat": "\x00\x01",
	})
	many := map[string]string{}
	for i := 0; i < 600; i++ {
		many[fmt.Sprintf("%s%03d", strings.Repeat("n", 120), i)] = ""
	}
	big := workspaceWith(t, many)
	tests := []struct {
		name string
		ws   string
		args map[string]any
		want string
	}{
		{"sorted, dirs marked, dotfiles and ignored files listed", ws, map[string]any{},
			".gitignore\n.hidden\nA.txt\nb.txt\nbin.dat\ndir/\nempty/"},
		{"subdirectory", ws, map[string]any{"path": "dir"}, "x"},
		{"empty", ws, map[string]any{"path": "empty"}, "(empty directory)"},
		{"limit", ws, map[string]any{"limit": 2.0}, ".gitignore\n.hidden\n\n[2 entries limit reached. Use limit=4 for more]"},
		{"default limit and byte limit", big, map[string]any{},
			"[500 entries limit reached. Use limit=1000 for more. 50.0KB limit reached]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := text(t, NewLsTool(ReadOptions{}), tc.ws, tc.args)
			if !strings.HasSuffix(got, tc.want) {
				t.Errorf("got:\n%s\nwant suffix:\n%s", clip(got), tc.want)
			}
		})
	}
	wantContains(t, failure(t, NewLsTool(ReadOptions{}), ws, map[string]any{"path": "nope"}), "Path not found: "+filepath.Join(ws, "nope"))
	wantContains(t, failure(t, NewLsTool(ReadOptions{}), ws, map[string]any{"path": "b.txt"}), "Not a directory: "+filepath.Join(ws, "b.txt"))
}

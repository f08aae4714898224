package tools

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name, path, content, want string
	}{
		{"new file", "a.txt", "hello", "Successfully wrote 5 bytes to a.txt"},
		{"creates parents", "deep/er/b.txt", "x\n", "Successfully wrote 2 bytes to deep/er/b.txt"},
		{"counts bytes, not characters", "u.txt", "h\u00e9\u2014", "Successfully wrote 6 bytes to u.txt"},
		{"overwrites", "old.txt", "new", "Successfully wrote 3 bytes to old.txt"},
		{"empty file", "empty.txt", "", "Successfully wrote 0 bytes to empty.txt"},
	}
	ws := workspaceWith(t, map[string]string{"old.txt": "old content that is longer"})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := text(t, NewWriteTool(), ws, map[string]any{"path": tc.path, "content": tc.content})
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			b, err := os.ReadFile(filepath.Join(ws, tc.path))
			must(t, err)
			if string(b) != tc.content {
				t.Errorf("file holds %q", b)
			}
		})
	}
	wantContains(t, failure(t, NewWriteTool(), ws, map[string]any{"path": "old.txt/x", "content": "x"}), "ENOTDIR: not a directory")
}

package tools

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durable-agents/agentloop/agent"
)

func TestReadText(t *testing.T) {
	long := strings.Repeat("x", 100)
	ws := workspaceWith(t, map[string]string{
		"small.txt":    "a\nb\nc",
		"many.txt":     numberedLines(2500),
		"wide.txt":     strings.Repeat(long+"\n", 1000), // 101 KB in 1001 lines
		"oneline.txt":  strings.Repeat("y", 60*1024) + "\nshort",
		"sub/deep.txt": "deep",
		"crlf.txt":     "x\r\ny",
	})
	tool := NewReadTool(ReadOptions{})
	tests := []struct {
		name string
		args map[string]any
		want []string
		not  []string
	}{
		{"whole file", map[string]any{"path": "small.txt"}, []string{"a\nb\nc"}, []string{"["}},
		{"@ prefix", map[string]any{"path": "@small.txt"}, []string{"a\nb\nc"}, nil},
		{"absolute inside", map[string]any{"path": filepath.Join(ws, "sub/deep.txt")}, []string{"deep"}, nil},
		{"offset", map[string]any{"path": "small.txt", "offset": 2.0}, []string{"b\nc"}, []string{"a"}},
		{"limit leaves more", map[string]any{"path": "small.txt", "limit": 1.0},
			[]string{"a\n\n[2 more lines in file. Use offset=2 to continue.]"}, nil},
		{"offset and limit", map[string]any{"path": "small.txt", "offset": 2.0, "limit": 1.0},
			[]string{"b\n\n[1 more lines in file. Use offset=3 to continue.]"}, nil},
		{"line limit", map[string]any{"path": "many.txt"},
			[]string{"line 2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"}, []string{"line 2001"}},
		{"line limit from offset", map[string]any{"path": "many.txt", "offset": 2001.0},
			[]string{"line 2001\n", "line 2500"}, []string{"[Showing"}},
		{"byte limit", map[string]any{"path": "wide.txt"},
			[]string{"[Showing lines 1-506 of 1001 (50.0KB limit). Use offset=507 to continue.]"}, nil},
		{"first line too long", map[string]any{"path": "oneline.txt"},
			[]string{"[Line 1 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' oneline.txt | head -c 51200]"}, nil},
		{"crlf kept", map[string]any{"path": "crlf.txt"}, []string{"x\r\ny"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := text(t, tool, ws, tc.args)
			wantContains(t, got, tc.want...)
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("did not want %q in:\n%s", n, clip(got))
				}
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	ws := workspaceWith(t, map[string]string{"small.txt": "a\nb\nc", "dir/": "", "bin.dat": "abc\x00def"})
	tool := NewReadTool(ReadOptions{})
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"missing", map[string]any{"path": "nope.txt"}, "ENOENT: no such file or directory, access '" + filepath.Join(ws, "nope.txt") + "'"},
		{"directory", map[string]any{"path": "dir"}, "EISDIR: illegal operation on a directory, read"},
		{"offset beyond end", map[string]any{"path": "small.txt", "offset": 10.0}, "Offset 10 is beyond end of file (3 lines total)"},
		{"binary", map[string]any{"path": "bin.dat"}, "Cannot read binary file bin.dat (7B, not a supported image)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantContains(t, failure(t, tool, ws, tc.args), tc.want)
		})
	}
}

func TestReadImage(t *testing.T) {
	ws := t.TempDir()
	var small bytes.Buffer
	must(t, png.Encode(&small, image.NewRGBA(image.Rect(0, 0, 4, 4))))
	must(t, os.WriteFile(filepath.Join(ws, "small.png"), small.Bytes(), 0o644))
	// A PNG header followed by padding is enough for sniffing and size.
	big := append(append([]byte(nil), small.Bytes()[:16]...), make([]byte, ReadMaxImageBytes)...)
	must(t, os.WriteFile(filepath.Join(ws, "big.png"), big, 0o644))
	tool := NewReadTool(ReadOptions{})

	r, err := run(t, tool, ws, map[string]any{"path": "small.png"})
	must(t, err)
	if len(r.Content) != 2 || r.Content[1].Type != agent.ContentImage || r.Content[1].MimeType != "image/png" {
		t.Fatalf("want text + png image block, got %+v", r.Content)
	}
	wantContains(t, r.Content[0].Text, "Read image file [image/png]")

	got := text(t, tool, ws, map[string]any{"path": "big.png"})
	wantContains(t, got, "Read image file [image/png]", "[Image omitted: 700.0KB exceeds the 700.0KB inline image limit.")
}

func TestReadResultStaysUnderPayloadLimit(t *testing.T) {
	// Worst case for JSON: 50 KB of control characters, each escaped to six
	// bytes.
	ws := workspaceWith(t, map[string]string{"ctl.txt": strings.Repeat("\x01", 3*DefaultMaxBytes)})
	r, err := run(t, NewReadTool(ReadOptions{}), ws, map[string]any{"path": "ctl.txt"})
	must(t, err)
	b, _ := json.Marshal(r)
	if len(b) > MaxResultBytes {
		t.Fatalf("result is %d bytes of JSON", len(b))
	}
}

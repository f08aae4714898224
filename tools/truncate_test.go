package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/durable-agents/agentloop/agent"
)

// The expectations are pi's truncateHead and truncateTail on the same input.
func TestTruncateHeadAndTail(t *testing.T) {
	tests := []struct {
		in               string
		lines, bytes     int
		head, headBy     string
		headLines        int
		firstLineTooLong bool
		tail, tailBy     string
		tailLines        int
		lastLinePartial  bool
	}{
		{"a\nb\nc", 2, 100, "a\nb", "lines", 2, false, "b\nc", "lines", 2, false},
		{"a\nb\nc", 10, 3, "a\nb", "bytes", 2, false, "b\nc", "bytes", 2, false},
		{"abcdef\nb", 10, 4, "", "bytes", 0, true, "b", "bytes", 1, false},
		{"x\nyy\nzzz", 10, 5, "x\nyy", "bytes", 2, false, "zzz", "bytes", 1, false},
		{"h\u00e9llo\nw\u00f6rld", 10, 7, "h\u00e9llo", "bytes", 1, false, "w\u00f6rld", "bytes", 1, false},
		{"", 1, 1, "", "", 1, false, "", "", 1, false},
		{"a\n", 1, 10, "a", "lines", 1, false, "", "lines", 1, false},
		{"abcdef", 10, 4, "", "bytes", 0, true, "cdef", "bytes", 1, true},
		{"ab\u00e9", 10, 2, "", "bytes", 0, true, "\u00e9", "bytes", 1, true},
	}
	for _, tc := range tests {
		h := TruncateHead(tc.in, tc.lines, tc.bytes)
		if h.Content != tc.head || h.TruncatedBy != tc.headBy || h.OutputLines != tc.headLines || h.FirstLineExceedsLimit != tc.firstLineTooLong {
			t.Errorf("head %q %d/%d: %+v", tc.in, tc.lines, tc.bytes, h)
		}
		tl := TruncateTail(tc.in, tc.lines, tc.bytes)
		if tl.Content != tc.tail || tl.TruncatedBy != tc.tailBy || tl.OutputLines != tc.tailLines || tl.LastLinePartial != tc.lastLinePartial {
			t.Errorf("tail %q %d/%d: %+v", tc.in, tc.lines, tc.bytes, tl)
		}
	}
}

func TestFormatSize(t *testing.T) {
	in := []int{0, 1023, 1024, 1536, 1100, 51200, 1048575, 1048576, 1572864, 1153434}
	want := []string{"0B", "1023B", "1.0KB", "1.5KB", "1.1KB", "50.0KB", "1024.0KB", "1.0MB", "1.5MB", "1.1MB"}
	for i, n := range in {
		if got := FormatSize(n); got != want[i] {
			t.Errorf("FormatSize(%d) = %s, want %s", n, got, want[i])
		}
	}
}

func TestCapResultKeepsPayloadUnderLimit(t *testing.T) {
	huge := strings.Repeat("\x01", MaxResultBytes)
	tests := []agent.ToolResult{
		{Content: []agent.Content{agent.Text(huge)}},
		{Content: []agent.Content{agent.Text("ok")}, Details: json.RawMessage(`{"diff":"` + strings.Repeat("x", 2*MaxResultBytes) + `"}`)},
		{Content: []agent.Content{agent.Text("img"), agent.Image(strings.Repeat("A", 2*MaxResultBytes), "image/png")}},
		{Content: []agent.Content{agent.Text(huge), agent.Text(huge), agent.Text("tail")}},
	}
	for i, r := range tests {
		got := capResult(r)
		if n := resultSize(got); n > MaxResultBytes {
			t.Errorf("case %d: %d bytes", i, n)
		}
	}
	small := agent.TextResult("fine")
	if got := capResult(small); agent.TextOf(got.Content) != "fine" {
		t.Errorf("a small result changed")
	}
}

// An edit of a file of control characters makes the largest diff JSON.
func TestEditDiffStaysUnderPayloadLimit(t *testing.T) {
	line := strings.Repeat("\x01", 1900)
	file := strings.Repeat(line+"\n", 400)
	ws := workspaceWith(t, map[string]string{"f.txt": "start\n" + file + "end\n"})
	r, err := run(t, NewEditTool(), ws, map[string]any{"path": "f.txt", "edits": edits("start\n"+file+"end", "replaced")})
	must(t, err)
	b, _ := json.Marshal(r)
	if len(b) > MaxResultBytes {
		t.Fatalf("%d bytes", len(b))
	}
	wantContains(t, string(b), "diff truncated to 128.0KB")
}

func TestUnifiedDiffLastLineWithoutNewline(t *testing.T) {
	// pi's generateDiffString("x\ny\nz", "x\nY\nz\nw")
	diff, first := unifiedDiff("x\ny\nz", "x\nY\nz\nw")
	if want := " 1 x\n-2 y\n-3 z\n+2 Y\n+3 z\n+4 w"; diff != want || first != 2 {
		t.Errorf("diff %q first %d, want %q 2", diff, first, want)
	}
}

package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/durable-agents/agentloop/agent"
)

// Output limits shared by the built-in tools (pi's truncate.ts). Whichever of
// lines and bytes is hit first wins.
const (
	DefaultMaxLines = 2000
	DefaultMaxBytes = 50 * 1024
	// GrepMaxLineLength caps one grep output line, in characters.
	GrepMaxLineLength = 500
	// MaxResultBytes bounds the JSON of one tool result, far below
	// Temporal's 2 MB payload limit, whatever a tool produced.
	MaxResultBytes = 1 << 20
)

// Truncation describes what a truncation kept (pi's TruncationResult
// without the content, so details never carry the output twice).
type Truncation struct {
	Content               string `json:"-"`
	Truncated             bool   `json:"truncated"`
	TruncatedBy           string `json:"truncatedBy,omitempty"` // "lines" or "bytes"
	TotalLines            int    `json:"totalLines"`
	TotalBytes            int    `json:"totalBytes"`
	OutputLines           int    `json:"outputLines"`
	OutputBytes           int    `json:"outputBytes"`
	LastLinePartial       bool   `json:"lastLinePartial"`
	FirstLineExceedsLimit bool   `json:"firstLineExceedsLimit"`
	MaxLines              int    `json:"maxLines"`
	MaxBytes              int    `json:"maxBytes"`
}

// TruncateHead keeps the first lines of content that fit both limits, never
// a partial line. When the first line alone is too long it keeps nothing and
// sets FirstLineExceedsLimit, so the caller can point at another way in.
func TruncateHead(content string, maxLines, maxBytes int) Truncation {
	lines := strings.Split(content, "\n")
	t := Truncation{TotalLines: len(lines), TotalBytes: len(content), MaxLines: maxLines, MaxBytes: maxBytes}
	if len(lines) <= maxLines && len(content) <= maxBytes {
		t.Content, t.OutputLines, t.OutputBytes = content, len(lines), len(content)
		return t
	}
	t.Truncated = true
	if len(lines[0]) > maxBytes {
		t.TruncatedBy, t.FirstLineExceedsLimit = "bytes", true
		return t
	}
	t.TruncatedBy = "lines"
	size, n := 0, 0
	for n < len(lines) && n < maxLines {
		add := len(lines[n])
		if n > 0 {
			add++ // the newline before it
		}
		if size+add > maxBytes {
			t.TruncatedBy = "bytes"
			break
		}
		size += add
		n++
	}
	t.Content = strings.Join(lines[:n], "\n")
	t.OutputLines, t.OutputBytes = n, len(t.Content)
	return t
}

// TruncateTail keeps the last lines of content that fit both limits. When the
// last line alone is too long it keeps the end of that line and sets
// LastLinePartial (a build log's last line is what matters).
func TruncateTail(content string, maxLines, maxBytes int) Truncation {
	lines := strings.Split(content, "\n")
	t := Truncation{TotalLines: len(lines), TotalBytes: len(content), MaxLines: maxLines, MaxBytes: maxBytes}
	if len(lines) <= maxLines && len(content) <= maxBytes {
		t.Content, t.OutputLines, t.OutputBytes = content, len(lines), len(content)
		return t
	}
	t.Truncated, t.TruncatedBy = true, "lines"
	size, start := 0, len(lines)
	for start > 0 && len(lines)-start < maxLines {
		add := len(lines[start-1])
		if start < len(lines) {
			add++
		}
		if size+add > maxBytes {
			t.TruncatedBy = "bytes"
			break
		}
		size += add
		start--
	}
	kept := lines[start:]
	if len(kept) == 0 {
		kept = []string{tailBytes(lines[len(lines)-1], maxBytes)}
		t.LastLinePartial = true
	}
	t.Content = strings.Join(kept, "\n")
	t.OutputLines, t.OutputBytes = len(kept), len(t.Content)
	return t
}

// tailBytes returns the end of s in at most n bytes, starting on a rune
// boundary.
func tailBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	start := len(s) - n
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[start:]
}

// headBytes returns the start of s in at most n bytes, ending on a rune
// boundary.
func headBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// truncateLine cuts one line to maxChars characters with pi's marker.
func truncateLine(line string, maxChars int) (string, bool) {
	if utf8.RuneCountInString(line) <= maxChars {
		return line, false
	}
	n := 0
	for i := range line {
		if n == maxChars {
			return line[:i] + "... [truncated]", true
		}
		n++
	}
	return line, false
}

// FormatSize renders a byte count as pi does: 512B, 50.0KB, 1.5MB (one
// decimal, halves rounded up like JavaScript's toFixed).
func FormatSize(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1fKB", roundTenth(float64(n)/1024))
	default:
		return fmt.Sprintf("%.1fMB", roundTenth(float64(n)/(1024*1024)))
	}
}

func roundTenth(x float64) float64 { return math.Floor(x*10+0.5) / 10 }

// joinNotices renders pi's trailing notice block: "\n\n[a. b. c]", or "" when
// there is nothing to say.
func joinNotices(notices []string) string {
	if len(notices) == 0 {
		return ""
	}
	return "\n\n[" + strings.Join(notices, ". ") + "]"
}

// capResult is the last guard of the payload limit: whatever a tool built,
// the result's JSON stays within MaxResultBytes. It drops details first (only
// clients see them), then images, then cuts text; each step says so.
func capResult(r agent.ToolResult) agent.ToolResult {
	if resultSize(r) <= MaxResultBytes {
		return r
	}
	r.Details = json.RawMessage(`{"omitted":"details exceeded the result size limit"}`)
	content := append([]agent.Content(nil), r.Content...)
	r.Content = content
	if resultSize(r) <= MaxResultBytes {
		return r
	}
	for i, c := range content {
		if c.Type == agent.ContentImage {
			content[i] = agent.Text(fmt.Sprintf("[Image omitted: %s of base64 exceeds the result size limit.]", FormatSize(len(c.Data))))
		}
	}
	// A text byte can take six bytes of JSON (\u0001); an eighth of the
	// limit, shared by the blocks, fits with room for the rest.
	share := MaxResultBytes / 8 / max(1, len(content))
	for resultSize(r) > MaxResultBytes && share > 0 {
		for i, c := range content {
			if c.Type == agent.ContentText && len(c.Text) > share {
				content[i].Text = headBytes(c.Text, share) + fmt.Sprintf("\n\n[Output truncated to %s to fit the result size limit.]", FormatSize(share))
			}
		}
		share /= 2
	}
	return r
}

func resultSize(r agent.ToolResult) int {
	b, err := json.Marshal(r)
	if err != nil {
		return 0
	}
	return len(b)
}

// capError bounds an error's text the same way: it becomes the model's
// error result.
func capError(err error) error {
	if err == nil || len(err.Error()) <= MaxResultBytes/6 {
		return err
	}
	if IsFault(err) {
		return err
	}
	return errors.New(headBytes(err.Error(), MaxResultBytes/6) + "\n\n[Error text truncated to fit the result size limit.]")
}

// finish applies both guards to a tool's return values.
func finish(r agent.ToolResult, err error) (agent.ToolResult, error) {
	if err != nil {
		return agent.ToolResult{}, capError(err)
	}
	return capResult(r), nil
}

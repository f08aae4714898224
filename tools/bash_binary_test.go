package tools

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestBashBinaryOutput runs commands printing bytes that are not UTF-8, NUL
// bytes and one very long line, and requires what pi's bash tool reports
// for them. pi's OutputAccumulator decodes the output with a streaming
// TextDecoder: each maximal ill-formed subsequence becomes one U+FFFD (so
// "\xff\xff\xfe" is three of them, not one), NUL bytes stay, and the limits
// and notices count the decoded bytes, three for each U+FFFD. The expected
// values are what pi 0.73.1's OutputAccumulator gives for the same bytes
// (fed to it with node; the figures are in each case's comment). The full
// output file keeps the command's own bytes, as pi's does.
func TestBashBinaryOutput(t *testing.T) {
	ws := t.TempDir()
	tool := newTestBash(t)
	const r = "\uFFFD"
	tests := []struct {
		name, command, want string
	}{
		// pi: "���", totalBytes 9.
		{"each invalid byte", `printf '\377\377\376'`, r + r + r},
		// pi: "a�b": an incomplete sequence is one U+FFFD.
		{"incomplete sequence", `printf 'a\342\202b'`, "a" + r + "b"},
		// pi: "���A": a UTF-16 surrogate encoded in UTF-8 is invalid, byte by byte.
		{"encoded surrogate", `printf '\355\240\200A'`, r + r + r + "A"},
		// pi: nine U+FFFD: overlong forms and code points past U+10FFFF.
		{"overlong and too large", `printf '\300\257\340\200\257\364\220\200\200'`, strings.Repeat(r, 9)},
		// pi: "a�": a sequence cut by the end of the output.
		{"cut at the end", `printf 'a\360\237\230'`, "a" + r},
		// pi: "a\u0000b\u0000\n": NUL bytes are kept.
		{"NUL bytes", `printf 'a\0b\0\n'`, "a\x00b\x00\n"},
		// A valid 4-byte sequence split over two writes stays one character.
		{"split sequence", `printf 'x\360\237'; sleep 0.1; printf '\230\200y'`, "x\U0001F600y"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := text(t, tool, ws, map[string]any{"command": tc.command}); got != tc.want {
				t.Errorf("output %q, want %q", got, tc.want)
			}
		})
	}

	t.Run("limits count decoded bytes", func(t *testing.T) {
		// 20,000 bytes of 0xff decode to 60,000 bytes: over pi's 50 KB,
		// though the command printed less. pi: truncated by bytes,
		// totalBytes 60000, outputBytes 51198 (17,066 U+FFFD), the line is
		// 58.6KB.
		got, d := runCut(t, tool, ws, `head -c 20000 /dev/zero | tr '\0' '\377'`)
		tr := d.Truncation
		if !tr.Truncated || tr.TruncatedBy != "bytes" || tr.TotalBytes != 60000 || tr.OutputBytes != 51198 || !tr.LastLinePartial {
			t.Errorf("truncation %+v, want pi's: truncated by bytes, 60000 total, 51198 shown, last line partial", tr)
		}
		wantContains(t, got, strings.Repeat(r, 17066)+"\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: "+d.FullOutputPath+"]")
		full, err := os.ReadFile(d.FullOutputPath)
		must(t, err)
		if !bytes.Equal(full, bytes.Repeat([]byte{0xff}, 20000)) {
			t.Errorf("the full output file holds %d bytes, want the command's 20000 bytes of 0xff", len(full))
		}
	})

	t.Run("a 10 MB line", func(t *testing.T) {
		// pi: truncated by bytes, the last 50.0KB of line 1 (line is
		// 10.0MB), the whole line in the full output file.
		got, d := runCut(t, tool, ws, `head -c 10485760 /dev/zero | tr '\0' x; printf END`)
		if d.Truncation.TotalBytes != 10485763 || d.Truncation.OutputBytes != 51200 {
			t.Errorf("truncation %+v", d.Truncation)
		}
		wantContains(t, got, "xEND\n\n[Showing last 50.0KB of line 1 (line is 10.0MB). Full output: "+d.FullOutputPath+"]")
		if fi, err := os.Stat(d.FullOutputPath); err != nil || fi.Size() != 10485763 {
			t.Errorf("full output file: %v, %v", fi, err)
		}
	})
}

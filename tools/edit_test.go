package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func edits(pairs ...string) []any {
	var out []any
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, map[string]any{"oldText": pairs[i], "newText": pairs[i+1]})
	}
	return out
}

func TestEditApplies(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		args    map[string]any
		want    string // file afterwards
		message string
	}{
		{"exact", "a\nb\nc\n", map[string]any{"edits": edits("b", "B")}, "a\nB\nc\n", "Successfully replaced 1 block(s) in f.txt."},
		{"legacy oldText/newText", "a\nb\nc\n", map[string]any{"oldText": "b", "newText": "B"}, "a\nB\nc\n", ""},
		{"edits as JSON string", "a\nb\n", map[string]any{"edits": `[{"oldText":"a","newText":"A"}]`}, "A\nb\n", ""},
		{"several disjoint", "one\ntwo\nthree\n", map[string]any{"edits": edits("one", "1", "three", "3")}, "1\ntwo\n3\n",
			"Successfully replaced 2 block(s) in f.txt."},
		{"crlf kept", "a\r\nb\r\nc\r\n", map[string]any{"edits": edits("a\nb", "x\ny")}, "x\r\ny\r\nc\r\n", ""},
		{"bom kept", "\uFEFFhello world", map[string]any{"edits": edits("hello", "bye")}, "\uFEFFbye world", ""},
		{"mixed endings outside the edit untouched", "a\r\nb\nc\r\n", map[string]any{"edits": edits("c", "C")}, "a\r\nb\nC\r\n", ""},
		{"fuzzy: smart quotes, only the region changes",
			"x = \u201chi\u201d\ny = \u2018keep\u2019\n", map[string]any{"edits": edits(`x = "hi"`, `x = "bye"`)},
			"x = \"bye\"\ny = \u2018keep\u2019\n", ""},
		{"fuzzy: trailing whitespace in the file",
			"if x {   \n\treturn\t\n}\nkeep   \n", map[string]any{"edits": edits("if x {\n\treturn\n}", "if y {\n\treturn\n}")},
			"if y {\n\treturn\n}\nkeep   \n", ""},
		{"fuzzy: unicode dash and nbsp", "a \u2014 b\u00a0c\n", map[string]any{"edits": edits("a - b c", "done")}, "done\n", ""},
		{"fuzzy: NFKC ligature", "\ufb01le\n", map[string]any{"edits": edits("file", "doc")}, "doc\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspaceWith(t, map[string]string{"f.txt": tc.file})
			args := map[string]any{"path": "f.txt"}
			for k, v := range tc.args {
				args[k] = v
			}
			got := text(t, NewEditTool(), ws, args)
			if tc.message != "" && got != tc.message {
				t.Errorf("message %q, want %q", got, tc.message)
			}
			b, _ := os.ReadFile(filepath.Join(ws, "f.txt"))
			if string(b) != tc.want {
				t.Errorf("file is %q, want %q", b, tc.want)
			}
		})
	}
}

func TestEditErrors(t *testing.T) {
	file := "dup\ndup\nalpha\nbeta\n"
	tests := []struct {
		name string
		path string
		args map[string]any
		want string
	}{
		{"missing text", "f.txt", map[string]any{"edits": edits("nope", "x")},
			"Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines."},
		{"missing text, several edits", "f.txt", map[string]any{"edits": edits("alpha", "A", "nope", "x")},
			"Could not find edits[1] in f.txt. The oldText must match exactly including all whitespace and newlines."},
		{"not unique", "f.txt", map[string]any{"edits": edits("dup", "x")},
			"Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique."},
		{"not unique, several edits", "f.txt", map[string]any{"edits": edits("alpha", "A", "dup", "x")},
			"Found 2 occurrences of edits[1] in f.txt. Each oldText must be unique. Please provide more context to make it unique."},
		{"empty oldText", "f.txt", map[string]any{"edits": edits("", "x")}, "oldText must not be empty in f.txt."},
		{"overlap", "f.txt", map[string]any{"edits": edits("alpha\nbeta", "x", "beta", "y")},
			"edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint regions."},
		{"overlap at one start, named in call order", "f.txt", map[string]any{"edits": edits("alpha\nbeta", "x", "alpha", "y")},
			"edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint regions."},
		{"no change", "f.txt", map[string]any{"edits": edits("alpha", "alpha")},
			"No changes made to f.txt. The replacement produced identical content."},
		{"no edits", "f.txt", map[string]any{"edits": []any{}},
			"Edit tool input is invalid. edits must contain at least one replacement."},
		{"missing file", "none.txt", map[string]any{"edits": edits("a", "b")}, "Could not edit file: none.txt. Error code: ENOENT."},
		{"binary file", "bin.dat", map[string]any{"edits": edits("a", "b")}, "Could not edit file: bin.dat. It is a binary file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspaceWith(t, map[string]string{"f.txt": file, "bin.dat": "a\x00b"})
			args := map[string]any{"path": tc.path}
			for k, v := range tc.args {
				args[k] = v
			}
			wantContains(t, failure(t, NewEditTool(), ws, args), tc.want)
			b, _ := os.ReadFile(filepath.Join(ws, "f.txt"))
			if string(b) != file {
				t.Errorf("a failed edit changed the file: %q", b)
			}
		})
	}
}

func TestEditDiff(t *testing.T) {
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, "l"+strconv.Itoa(i))
	}
	ws := workspaceWith(t, map[string]string{"f.txt": strings.Join(lines, "\n") + "\n"})
	r, err := run(t, NewEditTool(), ws, map[string]any{"path": "f.txt", "edits": edits("l10\n", "ten\nTEN\n")})
	must(t, err)
	var d EditDetails
	must(t, json.Unmarshal(r.Details, &d))
	want := strings.Join([]string{
		"    ...",
		"  6 l6",
		"  7 l7",
		"  8 l8",
		"  9 l9",
		"-10 l10",
		"+10 ten",
		"+11 TEN",
		" 11 l11",
		" 12 l12",
		" 13 l13",
		" 14 l14",
		"    ...",
	}, "\n")
	if d.Diff != want || d.FirstChangedLine != 10 {
		t.Errorf("diff (first changed %d):\n%s\nwant:\n%s", d.FirstChangedLine, d.Diff, want)
	}
}

func TestEditRetryAfterAppliedEditReturnsSameResult(t *testing.T) {
	ws := workspaceWith(t, map[string]string{"f.txt": "a\nb\n"})
	tool := NewEditTool()
	call := Call{Args: map[string]any{"path": "f.txt", "edits": edits("a", "A")}, Workspace: ws, IdempotencyKey: "wf/call-1"}
	first, err := tool.Execute(context.Background(), call)
	must(t, err)
	again, err := tool.Execute(context.Background(), call)
	if err != nil {
		t.Fatalf("retry of an applied edit: %v", err)
	}
	if string(again.Details) != string(first.Details) {
		t.Errorf("retry result differs")
	}
	call.IdempotencyKey = "wf/call-2" // another call with the same text is a real miss
	if _, err := tool.Execute(context.Background(), call); err == nil {
		t.Errorf("a new call must not reuse another call's result")
	}
}

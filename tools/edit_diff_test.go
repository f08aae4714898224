package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestEditDiffMatchesPi compares details.diff with what pi's edit tool
// printed for the same edit (testdata/editdiff/gen.mjs ran pi's own
// generateDiffString): the same lines marked, in the same order.
func TestEditDiffMatchesPi(t *testing.T) {
	b, err := os.ReadFile("testdata/editdiff/golden.json")
	must(t, err)
	var cases []struct {
		Name, Old, New, Diff string
		FirstChangedLine     int
	}
	must(t, json.Unmarshal(b, &cases))
	for _, c := range cases {
		diff, first := unifiedDiff(c.Old, c.New)
		if diff != c.Diff || first != c.FirstChangedLine {
			t.Errorf("%s: %q -> %q\ngot (first changed %d):\n%s\npi (%d):\n%s", c.Name, c.Old, c.New, first, diff, c.FirstChangedLine, c.Diff)
		}
	}
}

// TestEditDiffAlignment holds small edits where another shortest diff than
// jsdiff's would mark other lines than pi does. The outputs are pi's
// generateDiffString; the comments say what the alternatives printed.
func TestEditDiffAlignment(t *testing.T) {
	tests := []struct{ old, new, want string }{
		// go-udiff v0.4.2 (lcs.DiffLines): "+1 c", "+2 }", "+3 }", " 1 }", "-2 b".
		{"}\nb\n", "c\n}\n}\n}\n", "+1 c\n 1 }\n-2 b\n+3 }\n+4 }"},
		// go-udiff: "-1 }", "+1 c", "+2 c", " 2 }", "-3 a", "-4 b".
		{"}\n}\na\nb\n", "c\nc\n}\n", "+1 c\n+2 c\n 1 }\n-2 }\n-3 a\n-4 b"},
		// A Myers that keeps the common last line first: "-1 a", "+1 }", "+2 b", "+3 }", " 2 b".
		{"a\nb\n", "}\nb\n}\nb\n", "-1 a\n+1 }\n 2 b\n+3 }\n+4 b"},
		// The same: "-1 }", "-2 }", "-3 }", "+1 a", " 4 a".
		{"}\n}\n}\na\n", "a\na\n", "-1 }\n-2 }\n-3 }\n 4 a\n+2 a"},
	}
	for _, tc := range tests {
		if got, _ := unifiedDiff(tc.old, tc.new); got != tc.want {
			t.Errorf("%q -> %q:\n%s\nwant:\n%s", tc.old, tc.new, got, tc.want)
		}
	}
}

// benchmarkSource is a Go-like file of n lines: many repeated lines ("}",
// blank lines, "return nil"), as real code has, which is what makes a line
// diff search.
func benchmarkSource(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		switch i % 8 {
		case 0:
			lines[i] = fmt.Sprintf("func f%d() error {", i)
		case 1:
			lines[i] = fmt.Sprintf("\tx := %d", i)
		case 2:
			lines[i] = "\tif x > 0 {"
		case 3:
			lines[i] = "\t\treturn nil"
		case 4:
			lines[i] = "\t}"
		case 5:
			lines[i] = "\treturn nil"
		case 6:
			lines[i] = "}"
		default:
			lines[i] = ""
		}
	}
	return lines
}

// BenchmarkEditDiff times details.diff for a 20,000-line file: ten
// scattered one-line edits (what the edit tool usually does), and every
// other line of 960 rewritten (960 lines removed or added, near
// diffMaxEdits, the most a diff searches), and every line replaced (the
// search gives up at diffMaxEdits).
func BenchmarkEditDiff(b *testing.B) {
	lines := benchmarkSource(20000)
	old := strings.Join(lines, "\n") + "\n"
	scattered := slices.Clone(lines)
	for i := 1000; i < len(scattered); i += 2000 {
		scattered[i] = "\tx := 0 // changed"
	}
	rewrite := slices.Clone(lines)
	for i := 10000; i < 10960; i++ {
		if i%2 == 0 {
			rewrite[i] = "\t// rewritten"
		}
	}
	replaced := make([]string, len(lines))
	for i := range replaced {
		replaced[i] = fmt.Sprint("line ", i)
	}
	for _, bc := range []struct {
		name string
		new  []string
	}{{"scattered", scattered}, {"rewrite", rewrite}, {"replaced", replaced}} {
		updated := strings.Join(bc.new, "\n") + "\n"
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				unifiedDiff(old, updated)
			}
		})
	}
}

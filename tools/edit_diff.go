package tools

import (
	"fmt"
	"strings"
)

// Diff limits: a diff rides in the result's details, so a line of minified
// code or a rewrite of a huge file must not blow the payload.
const (
	diffContextLines = 4
	// diffMaxEdits bounds the Myers search (lines removed plus added); past
	// it the changed middle is shown as removed then added, which is still a
	// correct diff.
	diffMaxEdits = 1000
	// diffMaxLineLength and diffMaxBytes cap what details.diff carries.
	diffMaxLineLength = 2000
	diffMaxBytes      = 128 * 1024
)

// splitDiffLines splits like jsdiff's diffLines tokens: every line keeps its
// newline, so a last line without one differs from the same line with one.
func splitDiffLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// unifiedDiff renders pi's edit diff: changed lines with +/- and their line
// number, diffContextLines of context, "..." for skipped runs. It returns
// the first changed line of the new text (0 when nothing changed).
func unifiedDiff(oldText, newText string) (string, int) {
	parts := diffLines(splitDiffLines(oldText), splitDiffLines(newText))
	width := len(fmt.Sprint(max(strings.Count(oldText, "\n"), strings.Count(newText, "\n")) + 1))
	var out []string
	oldNum, newNum, first := 1, 1, 0
	line := func(sign byte, num int, text string) {
		text = strings.TrimSuffix(text, "\n")
		text, _ = truncateLine(text, diffMaxLineLength)
		out = append(out, fmt.Sprintf("%c%*d %s", sign, width, num, text))
	}
	skip := func(n int) {
		out = append(out, fmt.Sprintf(" %*s ...", width, ""))
		oldNum += n
		newNum += n
	}
	context := func(lines []string) {
		for _, l := range lines {
			line(' ', oldNum, l)
			oldNum++
			newNum++
		}
	}
	for i, p := range parts {
		switch p.kind {
		case '+', '-':
			if first == 0 {
				first = newNum
			}
			for _, l := range p.lines {
				if p.kind == '+' {
					line('+', newNum, l)
					newNum++
				} else {
					line('-', oldNum, l)
					oldNum++
				}
			}
			continue
		}
		before := i > 0
		after := i < len(parts)-1
		c, n := diffContextLines, len(p.lines)
		switch {
		case before && after && n <= 2*c:
			context(p.lines)
		case before && after:
			context(p.lines[:c])
			skip(n - 2*c)
			context(p.lines[n-c:])
		case before:
			context(p.lines[:min(c, n)])
			if n > c {
				skip(n - c)
			}
		case after:
			if n > c {
				skip(n - c)
			}
			context(p.lines[max(0, n-c):])
		default:
			oldNum += n
			newNum += n
		}
	}
	tr := TruncateHead(strings.Join(out, "\n"), len(out)+1, diffMaxBytes)
	diff := tr.Content
	if tr.Truncated {
		diff += fmt.Sprintf("\n ... [diff truncated to %s]", FormatSize(diffMaxBytes))
	}
	return diff, first
}

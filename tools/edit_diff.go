package tools

import (
	"fmt"
	"strings"
)

// Diff limits: a diff rides in the result's details, so a line of minified
// code or a rewrite of a huge file must not blow the payload.
const (
	diffContextLines = 4
	// diffMaxEdits bounds the Myers search; past it the changed middle is
	// shown as removed then added, which is still a correct diff.
	diffMaxEdits = 1000
	// diffMaxLineLength and diffMaxBytes cap what details.diff carries.
	diffMaxLineLength = 2000
	diffMaxBytes      = 128 * 1024
)

type diffPart struct {
	kind  byte // ' ', '-', '+'
	lines []string
}

// diffLines is a line diff in jsdiff's shape: equal runs, and within a
// change the removed lines before the added ones.
func diffLines(a, b []string) []diffPart {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := myers(a[pre:len(a)-suf], b[pre:len(b)-suf])
	var parts []diffPart
	add := func(kind byte, line string) {
		if n := len(parts); n > 0 && parts[n-1].kind == kind {
			parts[n-1].lines = append(parts[n-1].lines, line)
			return
		}
		parts = append(parts, diffPart{kind: kind, lines: []string{line}})
	}
	for _, l := range a[:pre] {
		add(' ', l)
	}
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			add(' ', ops[i].line)
			i++
			continue
		}
		j := i
		for j < len(ops) && ops[j].kind != ' ' {
			j++
		}
		for _, kind := range []byte{'-', '+'} {
			for _, op := range ops[i:j] {
				if op.kind == kind {
					add(kind, op.line)
				}
			}
		}
		i = j
	}
	for _, l := range a[len(a)-suf:] {
		add(' ', l)
	}
	return parts
}

type diffOp struct {
	kind byte
	line string
}

// myers is the O((N+M)D) shortest edit script, keeping one window of V per
// step for the backtrack.
func myers(a, b []string) []diffOp {
	n, m := len(a), len(b)
	off := n + m + 1
	v := make([]int, 2*off+1)
	var trace [][]int
	for d := 0; d <= n+m; d++ {
		if d > diffMaxEdits {
			return replaceAll(a, b)
		}
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b)
			}
		}
	}
	return replaceAll(a, b)
}

func backtrack(trace [][]int, a, b []string) []diffOp {
	x, y := len(a), len(b)
	var ops []diffOp
	for d := len(trace) - 1; d > 0; d-- {
		w := trace[d] // V after step d-1, indexed k+d
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && w[k-1+d] < w[k+1+d]) {
			prevK = k + 1
		}
		prevX := w[prevK+d]
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			ops = append(ops, diffOp{' ', a[x-1]})
			x, y = x-1, y-1
		}
		if prevK == k+1 {
			ops = append(ops, diffOp{'+', b[y-1]})
			y--
		} else {
			ops = append(ops, diffOp{'-', a[x-1]})
			x--
		}
	}
	for x > 0 && y > 0 {
		ops = append(ops, diffOp{' ', a[x-1]})
		x, y = x-1, y-1
	}
	for i, j := 0, len(ops)-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
	return ops
}

func replaceAll(a, b []string) []diffOp {
	ops := make([]diffOp, 0, len(a)+len(b))
	for _, l := range a {
		ops = append(ops, diffOp{'-', l})
	}
	for _, l := range b {
		ops = append(ops, diffOp{'+', l})
	}
	return ops
}

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

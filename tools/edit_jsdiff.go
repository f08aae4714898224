package tools

import "slices"

type diffPart struct {
	kind  byte // ' ', '-', '+'
	lines []string
}

// diffLines is jsdiff's diffLines (the diff package 8.0 that pi 0.73.1
// renders with), step for step: a forward Myers search from the first line,
// its tie-breaks, and its parts in path order (a change may read -, +, -).
// Any shortest diff is correct, but only this one marks the lines pi marks.
// A textbook Myers that cuts the common prefix and suffix first and puts
// removals before additions (the earlier core here), and go-udiff v0.4.2
// (lcs.DiffLines, a two-sided search), each chose other lines than pi on
// 759 and 1,626 of 5,000 generated edits; this port on none.
// TestEditDiffMatchesPi holds 506 more with pi's output (the earlier core
// failed 89, go-udiff 197); TestEditDiffAlignment shows small examples.
func diffLines(a, b []string) []diffPart {
	s := &diffSearch{a: a, b: b}
	// best[off+k] is the furthest path found on diagonal k = old - new
	// (jsdiff's bestPath); k-1 and k+1 stay inside for every d searched.
	off := len(a) + len(b) + 1
	best := make([]diffPath, 2*off+1)
	start := diffPath{oldPos: -1, live: true}
	newPos := s.extendCommon(&start, 0)
	if start.oldPos+1 >= len(a) && newPos+1 >= len(b) {
		return s.parts(start.last)
	}
	best[off] = start
	// Once a path reaches the last old (new) line, diagonals beyond it
	// cannot lead to a shorter script: jsdiff stops looking at them.
	minK, maxK := -off, off
	for d := 1; d <= len(a)+len(b); d++ {
		if d > diffMaxEdits {
			return replaceMiddle(a, b)
		}
		for k := max(minK, -d); k <= min(maxK, d); k += 2 {
			removePath, addPath := best[off+k-1], best[off+k+1]
			best[off+k-1] = diffPath{} // no later diagonal reads it
			canAdd := addPath.live && addPath.oldPos-k >= 0 && addPath.oldPos-k < len(b)
			canRemove := removePath.live && removePath.oldPos+1 < len(a)
			if !canAdd && !canRemove {
				best[off+k] = diffPath{}
				continue
			}
			var p diffPath
			if !canRemove || (canAdd && removePath.oldPos < addPath.oldPos) {
				p = s.step(addPath, '+', 0)
			} else {
				p = s.step(removePath, '-', 1)
			}
			newPos = s.extendCommon(&p, k)
			if p.oldPos+1 >= len(a) && newPos+1 >= len(b) {
				return s.parts(p.last)
			}
			best[off+k] = p
			if p.oldPos+1 >= len(a) {
				maxK = min(maxK, k-1)
			}
			if newPos+1 >= len(b) {
				minK = max(minK, k+1)
			}
		}
	}
	return replaceMiddle(a, b) // not reached: d = len(a)+len(b) always ends
}

// diffPath is a path through the edit graph (live: jsdiff's bestPath entry
// is not undefined): the last old line it used and its runs of kept,
// removed and added lines, newest first. Paths share their older runs, so
// a run is never changed once made.
type diffPath struct {
	oldPos int
	last   *diffRun
	live   bool
}

type diffRun struct {
	kind  byte
	count int
	prev  *diffRun
}

// diffSearch holds the two texts' lines and the runs made so far, which
// come from chunks rather than one allocation each (a search makes one or
// two per step, up to about diffMaxEdits² steps).
type diffSearch struct {
	a, b []string
	runs []diffRun
}

func (s *diffSearch) run(kind byte, count int, prev *diffRun) *diffRun {
	if len(s.runs) == cap(s.runs) {
		s.runs = make([]diffRun, 0, 1024)
	}
	s.runs = append(s.runs, diffRun{kind, count, prev})
	return &s.runs[len(s.runs)-1]
}

// step is jsdiff's addToPath: one line removed or added, joining the last
// run when it is of the same kind.
func (s *diffSearch) step(p diffPath, kind byte, oldInc int) diffPath {
	if p.last != nil && p.last.kind == kind {
		return diffPath{p.oldPos + oldInc, s.run(kind, p.last.count+1, p.last.prev), true}
	}
	return diffPath{p.oldPos + oldInc, s.run(kind, 1, p.last), true}
}

// extendCommon is jsdiff's extractCommon: follow equal lines along
// diagonal k and return the new position reached.
func (s *diffSearch) extendCommon(p *diffPath, k int) int {
	oldPos, newPos := p.oldPos, p.oldPos-k
	n := 0
	for newPos+1 < len(s.b) && oldPos+1 < len(s.a) && s.a[oldPos+1] == s.b[newPos+1] {
		oldPos, newPos, n = oldPos+1, newPos+1, n+1
	}
	if n > 0 {
		p.last = s.run(' ', n, p.last)
	}
	p.oldPos = oldPos
	return newPos
}

// parts is jsdiff's buildValues: the runs, oldest first, with their lines.
func (s *diffSearch) parts(last *diffRun) []diffPart {
	var runs []*diffRun
	for r := last; r != nil; r = r.prev {
		runs = append(runs, r)
	}
	slices.Reverse(runs)
	parts := make([]diffPart, 0, len(runs))
	oldPos, newPos := 0, 0
	for _, r := range runs {
		switch r.kind {
		case '-':
			parts = append(parts, diffPart{'-', s.a[oldPos : oldPos+r.count]})
			oldPos += r.count
		case '+':
			parts = append(parts, diffPart{'+', s.b[newPos : newPos+r.count]})
			newPos += r.count
		default:
			parts = append(parts, diffPart{' ', s.b[newPos : newPos+r.count]})
			oldPos += r.count
			newPos += r.count
		}
	}
	return parts
}

// replaceMiddle is the diff past diffMaxEdits: the common first and last
// lines kept, everything between removed then added. pi searches on; a
// worker should not spend seconds on the details of a rewrite.
func replaceMiddle(a, b []string) []diffPart {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var parts []diffPart
	for _, p := range []diffPart{
		{' ', a[:pre]}, {'-', a[pre : len(a)-suf]}, {'+', b[pre : len(b)-suf]}, {' ', a[len(a)-suf:]},
	} {
		if len(p.lines) > 0 {
			parts = append(parts, p)
		}
	}
	return parts
}

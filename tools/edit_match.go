package tools

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// view is text derived from a file's raw bytes that remembers, for each of
// its bytes, the raw range it came from. Matching happens in a view; the
// replacement happens in the raw bytes, so everything outside the matched
// region stays byte for byte as it was (mixed line endings, odd Unicode,
// trailing spaces), where pi rewrites the whole file once fuzzy matching
// was needed.
type view struct {
	text       string
	start, end []int32 // nil: identity
}

func (v *view) rawStart(i int) int {
	if v.start == nil {
		return i
	}
	return int(v.start[i])
}

func (v *view) rawEnd(i int) int {
	if v.end == nil {
		return i + 1
	}
	return int(v.end[i])
}

// lfView turns CRLF and lone CR into LF, as pi's normalizeToLF does before
// matching.
func lfView(raw string) *view {
	if !strings.Contains(raw, "\r") {
		return &view{text: raw}
	}
	var b strings.Builder
	v := &view{start: make([]int32, 0, len(raw)), end: make([]int32, 0, len(raw))}
	for i := 0; i < len(raw); i++ {
		c, w := raw[i], 1
		if c == '\r' {
			c = '\n'
			if i+1 < len(raw) && raw[i+1] == '\n' {
				w = 2
			}
		}
		b.WriteByte(c)
		v.start = append(v.start, int32(i))
		v.end = append(v.end, int32(i+w))
		i += w - 1
	}
	v.text = b.String()
	return v
}

// fuzzyView is pi's normalizeForFuzzyMatch over a view: NFKC, trailing
// whitespace stripped from every line, smart quotes, Unicode dashes and
// special spaces made ASCII.
func fuzzyView(v *view) *view {
	var out []byte
	var start, end []int32
	var it norm.Iter
	it.InitString(norm.NFKC, v.text)
	for !it.Done() {
		p0 := it.Pos()
		seg := string(it.Next())
		p1 := it.Pos()
		for _, r := range seg {
			out = utf8.AppendRune(out, asciiLookalike(r))
			for len(start) < len(out) {
				start = append(start, int32(v.rawStart(p0)))
				end = append(end, int32(v.rawEnd(p1-1)))
			}
		}
	}
	return trimLineEnds(out, start, end)
}

// trimLineEnds drops trailing whitespace from every line, keeping the map.
func trimLineEnds(text []byte, start, end []int32) *view {
	w, lineStart := 0, 0
	trim := func() {
		for w > lineStart {
			r, size := utf8.DecodeLastRune(text[lineStart:w])
			if !unicode.IsSpace(r) && r != '\uFEFF' {
				return
			}
			w -= size
		}
	}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			trim()
			lineStart = w + 1
		}
		text[w], start[w], end[w] = text[i], start[i], end[i]
		w++
	}
	trim()
	return &view{text: string(text[:w]), start: start[:w], end: end[:w]}
}

// fuzzyText normalizes a string the model sent the same way.
func fuzzyText(s string) string { return fuzzyView(&view{text: s}).text }

func asciiLookalike(r rune) rune {
	switch r {
	case '\u2018', '\u2019', '\u201A', '\u201B':
		return '\''
	case '\u201C', '\u201D', '\u201E', '\u201F':
		return '"'
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		return '-'
	case '\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
		return ' '
	}
	return r
}

func toLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// lineEnding is pi's detectLineEnding: CRLF when the first line ends so.
func lineEnding(s string) string {
	lf := strings.IndexByte(s, '\n')
	if lf > 0 && s[lf-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// EditReplacement is one targeted replacement of edit.
type EditReplacement struct {
	OldText string `json:"oldText" description:"Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call."`
	NewText string `json:"newText" description:"Replacement text for this targeted edit."`
}

type editMatch struct {
	index      int // in edits
	start, end int // raw offsets
	newText    string
}

// applyEdits matches every edit against the original raw text (BOM already
// stripped), exactly first and then fuzzily, and returns the new raw text.
// Error texts are pi's.
func applyEdits(raw string, edits []EditReplacement, path string) (string, error) {
	n := len(edits)
	for i, e := range edits {
		if e.OldText == "" {
			if n == 1 {
				return "", fmt.Errorf("oldText must not be empty in %s.", path)
			}
			return "", fmt.Errorf("edits[%d].oldText must not be empty in %s.", i, path)
		}
	}
	lf := lfView(raw)
	var fz *view // built on first need: it costs a pass over the file
	eol := lineEnding(raw)
	var matches []editMatch
	for i, e := range edits {
		old := toLF(e.OldText)
		if fz == nil {
			fz = fuzzyView(lf)
		}
		fuzzyOld := fuzzyText(old)
		m := editMatch{index: i, newText: strings.ReplaceAll(toLF(e.NewText), "\n", eol)}
		if at := strings.Index(lf.text, old); at >= 0 {
			m.start, m.end = lf.rawStart(at), lf.rawEnd(at+len(old)-1)
		} else if at := strings.Index(fz.text, fuzzyOld); at >= 0 && fuzzyOld != "" {
			m.start, m.end = fz.rawStart(at), fz.rawEnd(at+len(fuzzyOld)-1)
		} else if n == 1 {
			return "", fmt.Errorf("Could not find the exact text in %s. The old text must match exactly including all whitespace and newlines.", path)
		} else {
			return "", fmt.Errorf("Could not find edits[%d] in %s. The oldText must match exactly including all whitespace and newlines.", i, path)
		}
		if count := strings.Count(fz.text, fuzzyOld); count > 1 {
			if n == 1 {
				return "", fmt.Errorf("Found %d occurrences of the text in %s. The text must be unique. Please provide more context to make it unique.", count, path)
			}
			return "", fmt.Errorf("Found %d occurrences of edits[%d] in %s. Each oldText must be unique. Please provide more context to make it unique.", count, i, path)
		}
		matches = append(matches, m)
	}
	// Stable, as JavaScript's sort in pi: edits starting at one place are
	// named in call order.
	slices.SortStableFunc(matches, func(a, b editMatch) int { return cmp.Compare(a.start, b.start) })
	for i := 1; i < len(matches); i++ {
		prev, cur := matches[i-1], matches[i]
		if prev.end > cur.start {
			return "", fmt.Errorf("edits[%d] and edits[%d] overlap in %s. Merge them into one edit or target disjoint regions.", prev.index, cur.index, path)
		}
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		b.WriteString(raw[last:m.start])
		b.WriteString(m.newText)
		last = m.end
	}
	b.WriteString(raw[last:])
	out := b.String()
	if out == raw {
		if n == 1 {
			return "", fmt.Errorf("No changes made to %s. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.", path)
		}
		return "", fmt.Errorf("No changes made to %s. The replacements produced identical content.", path)
	}
	return out, nil
}

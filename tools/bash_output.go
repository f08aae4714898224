package tools

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"sync"
	"unicode/utf8"
)

// bashOutput collects a command's output with bounded memory (pi's
// OutputAccumulator): a rolling tail for display, counters for the notices,
// and, once the output outgrows the limits, a file holding all of it. As in
// pi, the tail and the counters are of the output decoded as UTF-8 (each
// ill-formed sequence one U+FFFD, three bytes), the file of the command's
// own bytes.
type bashOutput struct {
	mu          sync.Mutex
	saved       *SavedOutputs
	scope       string // the run the full output belongs to
	dec         utf8Decoder
	tail        []byte // decoded
	tailAtStart bool   // tail begins at a line start
	raw         int    // bytes the command wrote
	total       int    // bytes decoded
	lines       int
	lastLine    int // decoded bytes since the last newline
	pending     []byte
	file        *os.File
	path        string
	dirty       bool  // written since the last snapshot for an update
	fileLimit   int64 // most bytes the full-output file keeps
	fileBytes   int64
	cut         bool // the file keeps nothing more
}

// rolling is how much tail is kept: twice the display limit, so the tail
// truncation still finds whole lines.
const bashRollingBytes = 2 * DefaultMaxBytes

func newBashOutput(saved *SavedOutputs, scope string, fileLimit int64) *bashOutput {
	return &bashOutput{saved: saved, scope: scope, tailAtStart: true, lines: 1, fileLimit: fileLimit}
}

// writeFile appends to the full-output file up to its limit and the run's
// cap, then says once that the rest was not kept.
func (o *bashOutput) writeFile(b []byte) {
	if o.cut {
		return
	}
	want := min(int64(len(b)), o.fileLimit-o.fileBytes)
	keep := o.saved.grant(o.path, want)
	o.file.Write(b[:keep])
	o.fileBytes += keep
	switch {
	case o.fileBytes >= o.fileLimit:
		o.cut = true
		fmt.Fprintf(o.file, "\n[Output beyond %s was not kept; the command's result shows its last lines.]\n", FormatSize(int(o.fileLimit)))
	case keep < want:
		// Outputs of this run still being written hold the rest of its cap.
		o.cut = true
		fmt.Fprintf(o.file, "\n[Output beyond %s was not kept: this run's saved outputs are at their cap of %s; the command's result shows its last lines.]\n",
			FormatSize(int(o.fileBytes)), FormatSize(int(o.saved.maxRunBytes)))
	}
}

func (o *bashOutput) Write(b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.dirty = true
	o.raw += len(b)
	o.appendDecoded(o.dec.decode(nil, b))
	switch {
	case o.file != nil:
		o.writeFile(b)
	case o.path != "":
		// The file could not be made; the notice says so, keep nothing more.
	default:
		o.pending = append(o.pending, b...)
		if o.needsFile() {
			o.persist()
		}
	}
}

// finish decodes what the command left incomplete at its end.
func (o *bashOutput) finish() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if text := o.dec.flush(nil); len(text) > 0 {
		o.dirty = true
		o.appendDecoded(text)
	}
}

// appendDecoded counts decoded text and keeps its tail.
func (o *bashOutput) appendDecoded(b []byte) {
	if len(b) == 0 {
		return
	}
	o.total += len(b)
	if nl := bytes.Count(b, []byte{'\n'}); nl > 0 {
		o.lines += nl
		o.lastLine = len(b) - bytes.LastIndexByte(b, '\n') - 1
	} else {
		o.lastLine += len(b)
	}
	o.tail = append(o.tail, b...)
	if len(o.tail) > 2*bashRollingBytes {
		cut := len(o.tail) - bashRollingBytes
		for cut < len(o.tail) && !utf8.RuneStart(o.tail[cut]) {
			cut++
		}
		o.tailAtStart = o.tail[cut-1] == '\n'
		o.tail = slices.Clone(o.tail[cut:])
	}
}

// truncated says whether the output is over the limits, in decoded bytes
// (pi's snapshot).
func (o *bashOutput) truncated() bool {
	return o.total > DefaultMaxBytes || o.lines > DefaultMaxLines
}

// needsFile says whether the full output must be kept in a file: over the
// limits in the command's bytes or in decoded ones (pi's shouldUseTempFile).
func (o *bashOutput) needsFile() bool {
	return o.raw > DefaultMaxBytes || o.truncated()
}

// persist opens the full-output file and writes what was held back.
func (o *bashOutput) persist() {
	if o.file != nil || o.path != "" {
		return
	}
	f, path, err := o.saved.create(o.scope)
	if err != nil {
		o.path = fmt.Sprintf("unavailable (%v)", err)
		return
	}
	o.file, o.path = f, path
	o.writeFile(o.pending)
	o.pending = nil
}

// snapshot returns the tail that fits the limits, its truncation, and the
// full output's path when the output was truncated.
func (o *bashOutput) snapshot() (Truncation, string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.dirty = false
	text := o.tail
	if !o.tailAtStart {
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			text = text[i+1:]
		}
	}
	tr := TruncateTail(string(text), DefaultMaxLines, DefaultMaxBytes)
	tr.TotalLines, tr.TotalBytes = o.lines, o.total
	tr.Truncated = o.truncated()
	if !tr.Truncated {
		return tr, ""
	}
	if tr.TruncatedBy == "" {
		tr.TruncatedBy = "lines"
		if o.total > DefaultMaxBytes {
			tr.TruncatedBy = "bytes"
		}
	}
	o.persist()
	return tr, o.path
}

func (o *bashOutput) isDirty() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dirty
}

func (o *bashOutput) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.file != nil {
		o.file.Close()
		o.file = nil
		o.saved.release(o.path)
	}
}

// format renders the output with pi's truncation notice; empty output reads
// as emptyText.
func (o *bashOutput) format(emptyText string) (string, any) {
	tr, path := o.snapshot()
	text := tr.Content
	if text == "" {
		text = emptyText
	}
	if !tr.Truncated {
		return text, nil
	}
	start := tr.TotalLines - tr.OutputLines + 1
	end := tr.TotalLines
	switch {
	case tr.LastLinePartial:
		o.mu.Lock()
		lastLine := o.lastLine
		o.mu.Unlock()
		text += fmt.Sprintf("\n\n[Showing last %s of line %d (line is %s). Full output: %s]",
			FormatSize(tr.OutputBytes), end, FormatSize(lastLine), path)
	case tr.TruncatedBy == "lines":
		text += fmt.Sprintf("\n\n[Showing lines %d-%d of %d. Full output: %s]", start, end, tr.TotalLines, path)
	default:
		text += fmt.Sprintf("\n\n[Showing lines %d-%d of %d (%s limit). Full output: %s]",
			start, end, tr.TotalLines, FormatSize(DefaultMaxBytes), path)
	}
	return text, map[string]any{"truncation": tr, "fullOutputPath": path}
}

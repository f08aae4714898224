package agentclient

import (
	"fmt"
	"io"
	"strings"
)

// tailLines is how many lines of a running tool's output the rolling tail
// shows on a terminal.
const tailLines = 4

// tail writes a running tool's partial output, text being all of it so
// far. On a terminal it shows the last tailLines lines, redrawn in place
// while nothing else was written since; elsewhere (a pipe, a file) it
// appends the complete lines not written yet, so every line appears once.
func (p *Printer) tail(callID, toolName, text string) {
	if p.Terminal {
		p.rollTail(callID, toolName, text)
		return
	}
	if p.appended == nil {
		p.appended = map[string]string{}
	}
	done := p.appended[callID]
	rest := text
	if strings.HasPrefix(text, done) {
		rest = text[len(done):]
	} else if done != "" {
		// The partial output is a window that moved: go on after the
		// last line written, if it is still in the window.
		last := done[strings.LastIndex(done[:len(done)-1], "\n")+1:]
		if j := strings.LastIndex(text, last); j >= 0 {
			rest = text[j+len(last):]
		}
	}
	complete := rest[:strings.LastIndex(rest, "\n")+1]
	if complete != "" {
		for _, line := range strings.Split(strings.TrimSuffix(complete, "\n"), "\n") {
			fmt.Fprintf(p.W, "       %s│ %s%s\n", p.dim(), p.cutLine(line), p.reset())
		}
	}
	p.appended[callID] = text[:len(text)-len(rest)+len(complete)]
}

// rollTail redraws the tail of a tool's output in place.
func (p *Printer) rollTail(callID, toolName, text string) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	if p.tailCall == callID && p.tailDrawn > 0 {
		fmt.Fprintf(p.W, "\x1b[%dA", p.tailDrawn) // back to the tail's first line
	} else {
		p.tailDrawn = 0
	}
	fmt.Fprintf(p.W, "\r\x1b[2K       %s… %s %s%s\n", p.dim(), toolName, callID, p.reset())
	for _, line := range lines {
		fmt.Fprintf(p.W, "\r\x1b[2K       %s│ %s%s\n", p.dim(), p.cutLine(line), p.reset())
	}
	drawn := 1 + len(lines)
	for ; drawn < p.tailDrawn; drawn++ {
		fmt.Fprint(p.W, "\r\x1b[2K\n")
	}
	p.tailCall, p.tailDrawn = callID, drawn
}

// cutLine cuts one line of output to the width.
func (p *Printer) cutLine(s string) string {
	s = strings.ReplaceAll(strings.TrimRight(s, "\r"), "\t", "    ")
	if r := []rune(s); len(r) > p.width() {
		return string(r[:p.width()-1]) + "…"
	}
	return s
}

func (p *Printer) dim() string {
	if p.Color {
		return "\x1b[2m"
	}
	return ""
}

func (p *Printer) reset() string {
	if p.Color {
		return "\x1b[0m"
	}
	return ""
}

// markWriter forgets the drawn tail when anything else is written: the
// next partial output starts a new tail below it.
type markWriter struct {
	w io.Writer
	p *Printer
}

func (m markWriter) Write(b []byte) (int, error) {
	m.p.tailDrawn = 0
	return m.w.Write(b)
}

// color is s in the color of the escape sequence c, with Color.
func (p *Printer) color(c, s string) string {
	if p.Color {
		return c + s + "\x1b[0m"
	}
	return s
}

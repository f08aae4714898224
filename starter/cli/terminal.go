package cli

import (
	"io"
	"os"

	"golang.org/x/term"
)

// isTerminal says whether w is a terminal: the starter updates lines in
// place, colors its output and shows a prompt marker only there.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// colors are the escape sequences of the starter's few colors, all empty
// when the output is not a terminal or NO_COLOR is set (no-color.org).
type colors struct {
	dim, bold, red, green, yellow, cyan, reset string
}

func colorsFor(w io.Writer) colors {
	if !isTerminal(w) || os.Getenv("NO_COLOR") != "" {
		return colors{}
	}
	return colors{dim: "\x1b[2m", bold: "\x1b[1m", red: "\x1b[31m", green: "\x1b[32m",
		yellow: "\x1b[33m", cyan: "\x1b[36m", reset: "\x1b[0m"}
}

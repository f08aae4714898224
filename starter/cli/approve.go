package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/tools"
)

// ANSI colors of an approval's diff.
const (
	colorRed   = "\x1b[31m"
	colorGreen = "\x1b[32m"
	colorDim   = "\x1b[2m"
	colorBold  = "\x1b[1m"
	colorReset = "\x1b[0m"
)

// describeCall is what an approval prompt shows of a call, as coding agents
// show it: an edit or write as the unified diff it would make (the edit
// tool's own details.diff code, against the file as it is now in the
// workspace), bash as its command, any other tool as its arguments once,
// indented JSON.
func describeCall(p agentapi.PendingApproval, workspace string, color bool) string {
	paint := func(c, s string) string {
		if !color {
			return s
		}
		return c + s + colorReset
	}
	path, _ := p.Args["path"].(string)
	switch p.ToolName {
	case "bash":
		if cmd, ok := p.Args["command"].(string); ok {
			return "  $ " + paint(colorBold, cmd)
		}
	case "edit", "write":
		if path == "" {
			break
		}
		current, readErr := os.ReadFile(resolve(workspace, path))
		var diff, note string
		if p.ToolName == "write" {
			content, _ := p.Args["content"].(string)
			if readErr != nil {
				note = " (new file)"
			}
			diff = tools.WriteDiff(string(current), content)
		} else {
			var edits []tools.EditReplacement
			b, _ := json.Marshal(p.Args["edits"])
			_ = json.Unmarshal(b, &edits)
			var err error
			if readErr == nil {
				diff, err = tools.EditPreview(string(current), edits, path)
			}
			if readErr != nil || err != nil {
				// The file is not readable here (the workspace may be on
				// the worker's machine) or the edits do not apply to it:
				// show each replacement on its own.
				note = " (the replacements; the file could not be diffed here)"
				var parts []string
				for _, e := range edits {
					parts = append(parts, tools.WriteDiff(e.OldText, e.NewText))
				}
				diff = strings.Join(parts, "\n ...\n")
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "  %s%s\n", paint(colorBold, path), note)
		for _, line := range strings.Split(diff, "\n") {
			switch {
			case strings.HasPrefix(line, "+"):
				line = paint(colorGreen, line)
			case strings.HasPrefix(line, "-"):
				line = paint(colorRed, line)
			default:
				line = paint(colorDim, line)
			}
			fmt.Fprintf(&b, "  %s\n", line)
		}
		return strings.TrimRight(b.String(), "\n")
	}
	args, _ := json.MarshalIndent(p.Args, "  ", "  ")
	return "  " + string(args)
}

// resolve is path inside workspace, as the tools resolve a relative path.
func resolve(workspace, path string) string {
	if filepath.IsAbs(path) || workspace == "" {
		return path
	}
	return filepath.Join(workspace, path)
}

package agentclient

import (
	"encoding/json"
	"fmt"
	"strings"
)

// CallArgs is how a terminal shows a tool call's arguments on one line:
// an edit or write as its path and size (the approval prompt shows the
// diff), bash as its command, anything else as its JSON.
func CallArgs(name string, args map[string]any) string {
	path, _ := args["path"].(string)
	switch name {
	case "edit":
		if edits, ok := args["edits"].([]any); ok && path != "" {
			return fmt.Sprintf("%s (%d replacement(s))", path, len(edits))
		}
	case "write":
		if content, ok := args["content"].(string); ok && path != "" {
			return fmt.Sprintf("%s (%d lines)", path, strings.Count(content, "\n")+1)
		}
	case "bash":
		if cmd, ok := args["command"].(string); ok {
			return "$ " + cmd
		}
	}
	b, _ := json.Marshal(args)
	return string(b)
}

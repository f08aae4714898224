package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agentapi"
)

// What an approval prompt shows of each kind of call: a write as its diff
// against the file (all added for a new file), an edit as its diff, bash
// as its command, another tool as its arguments once, indented; an edit
// whose file cannot be read here as its replacements.
func TestDescribeCall(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\ntwo\n"), 0o644))
	call := func(tool string, args map[string]any) string {
		return describeCall(agentapi.PendingApproval{ToolName: tool, Args: args}, ws, false)
	}
	require.Equal(t, "  new.txt (new file)\n  +1 hi", call("write", map[string]any{"path": "new.txt", "content": "hi\n"}))
	require.Equal(t, "  a.txt\n   1 one\n  -2 two\n  +2 three", call("write", map[string]any{"path": "a.txt", "content": "one\nthree\n"}))
	require.Equal(t, "  a.txt\n  -1 one\n  +1 uno\n   2 two",
		call("edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "one", "newText": "uno"}}}))
	require.Equal(t, "  gone.txt (the replacements; the file could not be diffed here)\n  -1 x\n  +1 y",
		call("edit", map[string]any{"path": "gone.txt", "edits": []any{map[string]any{"oldText": "x", "newText": "y"}}}))
	require.Equal(t, "  $ rm -rf build", call("bash", map[string]any{"command": "rm -rf build"}))
	require.Equal(t, "  {\n    \"pattern\": \"TODO\"\n  }", call("grep", map[string]any{"pattern": "TODO"}))

	colored := describeCall(agentapi.PendingApproval{ToolName: "write", Args: map[string]any{"path": "new.txt", "content": "hi\n"}}, ws, true)
	require.Contains(t, colored, colorGreen+"+1 hi"+colorReset)
}

package tools

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	"github.com/durable-agents/agentloop/agent"
)

// WriteToolName is the write tool's name.
const WriteToolName = "write"

//go:embed descriptions/write.md
var writeDescription string

// WriteParams are write's arguments.
type WriteParams struct {
	Path    string `json:"path" description:"Path to the file to write (relative or absolute)"`
	Content string `json:"content" description:"Content to write to the file"`
}

// WriteTool creates or overwrites a file inside the workspace.
type WriteTool struct{ def Definition }

// NewWriteTool returns the write tool. It runs at most once per call
// (MaxAttempts 1), so a worker lost mid-write surfaces as a failed call
// rather than as a second write the model did not ask for. pi declares no
// execution mode for write, so batches stay parallel; writes and edits of the
// same file are serialised by a per-file lock, as in pi.
func NewWriteTool() *WriteTool {
	return &WriteTool{def: Definition{
		Name:        WriteToolName,
		Label:       WriteToolName,
		Description: renderText(writeDescription, nil),
		Parameters:  paramsSchema(WriteParams{}, nil, false),
		Durability:  Durability{MaxAttempts: 1},
	}}
}

// Definition implements Tool.
func (t *WriteTool) Definition() Definition { return t.def }

// Execute implements Tool.
func (t *WriteTool) Execute(ctx context.Context, call Call) (agent.ToolResult, error) {
	return finish(t.execute(ctx, call))
}

func (t *WriteTool) execute(ctx context.Context, call Call) (agent.ToolResult, error) {
	var p WriteParams
	if err := decodeParams(call.Args, &p); err != nil {
		return agent.ToolResult{}, err
	}
	ws, err := openWorkspace(call.Workspace, false)
	if err != nil {
		return agent.ToolResult{}, err
	}
	abs, err := ws.Resolve(p.Path)
	if err != nil {
		return agent.ToolResult{}, err
	}
	unlock := lockFile(abs)
	defer unlock()
	if err := aborted(ctx); err != nil {
		return agent.ToolResult{}, err
	}
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return agent.ToolResult{}, nodeError(err, "mkdir", dir)
	}
	if err := os.WriteFile(abs, []byte(p.Content), 0o644); err != nil {
		return agent.ToolResult{}, nodeError(err, "open", abs)
	}
	return agent.TextResult(fmt.Sprintf("Successfully wrote %d bytes to %s", len(p.Content), p.Path)), nil
}

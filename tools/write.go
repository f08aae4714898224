package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

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

// NewWriteTool returns the write tool: it creates or overwrites a file
// inside the workspace. A retry is safe (RetrySafe): write replaces the
// whole file with the call's content, so running a call again after a lost
// attempt leaves the file as one run would. pi declares no execution mode
// for write, so batches stay parallel; writes and edits of the same file
// are serialised by a per-file lock, as in pi.
func NewWriteTool() Tool {
	return New(Definition{
		Name:        WriteToolName,
		Label:       WriteToolName,
		Description: renderText(writeDescription, nil),
		Parameters:  paramsSchema(WriteParams{}, nil, false),
		Workspace:   true,
		Durability:  Durability{Retry: RetrySafe},
	}, func(ctx context.Context, call Call, p WriteParams) (agent.ToolResult, error) {
		return finish(write(ctx, call, p))
	})
}

func write(ctx context.Context, call Call, p WriteParams) (agent.ToolResult, error) {
	ws, abs, unlock, err := lockToChange(ctx, call, p.Path)
	if err != nil {
		return agent.ToolResult{}, err
	}
	defer unlock()
	files, err := ws.tree(abs, false)
	if err != nil {
		return agent.ToolResult{}, err
	}
	defer files.close()
	dir := filepath.Dir(abs)
	if err := files.mkdirAll(dir); err != nil {
		return agent.ToolResult{}, nodeError(err, "mkdir", dir)
	}
	// Through the workspace's root, never truncating before the file is
	// known to be a regular file inside it.
	f, err := files.open(abs, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) { // a named pipe nobody reads
			return agent.ToolResult{}, fmt.Errorf("%s is a named pipe, not a regular file; file tools only read and write regular files.", p.Path)
		}
		return agent.ToolResult{}, nodeError(err, "open", abs)
	}
	defer f.Close()
	info, err := f.Stat()
	if err == nil {
		err = checkRegular(info, p.Path)
	}
	if err == nil && info.IsDir() {
		err = syscall.EISDIR
	}
	if err == nil {
		err = f.Truncate(0)
	}
	if err == nil {
		_, err = f.Write([]byte(p.Content))
	}
	if err != nil {
		return agent.ToolResult{}, nodeError(err, "open", abs)
	}
	return agent.TextResult(fmt.Sprintf("Successfully wrote %d bytes to %s", len(p.Content), p.Path)), nil
}

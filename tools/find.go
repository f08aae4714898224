package tools

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"

	"github.com/durable-agents/agentloop/agent"
)

// FindToolName is the find tool's name.
const FindToolName = "find"

// FindDefaultLimit is how many paths find returns unless asked for more.
const FindDefaultLimit = 1000

//go:embed descriptions/find.md
var findDescription string

// FindParams are find's arguments.
type FindParams struct {
	Pattern string `json:"pattern" description:"Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"`
	Path    string `json:"path,omitempty" description:"Directory to search in (default: current directory)"`
	Limit   *int   `json:"limit,omitempty" description:"Maximum number of results (default: {{.DefaultLimit}})"`
}

// NewFindTool returns the find tool: it lists files and directories
// matching a glob, as pi's fd call does: smart case, hidden files
// included, .gitignore honoured, directories with a trailing slash.
func NewFindTool(opts ReadOptions) Tool {
	data := map[string]any{"DefaultLimit": FindDefaultLimit, "MaxKB": DefaultMaxBytes / 1024}
	return New(readDefinition(FindToolName, findDescription, FindParams{}, data),
		func(ctx context.Context, call Call, p FindParams) (agent.ToolResult, error) {
			return finish(find(ctx, opts, call, p))
		})
}

func find(ctx context.Context, opts ReadOptions, call Call, p FindParams) (agent.ToolResult, error) {
	ws, err := opts.workspace(call)
	if err != nil {
		return agent.ToolResult{}, err
	}
	root, err := ws.ResolveRead(cmp.Or(p.Path, "."))
	if err != nil {
		return agent.ToolResult{}, err
	}
	limit := FindDefaultLimit
	if p.Limit != nil {
		limit = max(1, *p.Limit)
	}
	info, err := os.Stat(root)
	if err != nil {
		return agent.ToolResult{}, fmt.Errorf("Path not found: %s", root)
	}
	if !info.IsDir() {
		return agent.ToolResult{}, fmt.Errorf("Not a directory: %s", root)
	}
	glob, ok := newGlobMatcher(p.Pattern, true)
	if !ok {
		return agent.ToolResult{}, fmt.Errorf("Invalid glob pattern: %s", p.Pattern)
	}
	var found []string
	files, err := ws.tree(root, true)
	if err != nil {
		return agent.ToolResult{}, fmt.Errorf("Path not found: %s", root)
	}
	defer files.close()
	err = walkSearch(ctx, files, root, ws.root, func(e walkEntry) error {
		if !glob.match(e.rel) {
			return nil
		}
		if e.isDir {
			found = append(found, e.rel+"/")
		} else {
			found = append(found, e.rel)
		}
		if len(found) >= limit {
			return errStopSearch
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopSearch) {
		return agent.ToolResult{}, err
	}
	if len(found) == 0 {
		return agent.TextResult("No files found matching pattern"), nil
	}
	notice := ""
	if len(found) >= limit {
		notice = fmt.Sprintf("%d results limit reached. Use limit=%d for more, or refine pattern", limit, limit*2)
	}
	return listResult(found, notice, "resultLimitReached", limit), nil
}

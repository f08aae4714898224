package tools

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"strings"

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

// FindTool lists files and directories matching a glob, as pi's fd call
// does: smart case, hidden files included, .gitignore honoured, directories
// with a trailing slash.
type FindTool struct {
	opts ReadOptions
	def  Definition
}

// NewFindTool returns the find tool.
func NewFindTool(opts ReadOptions) *FindTool {
	data := map[string]any{"DefaultLimit": FindDefaultLimit, "MaxKB": DefaultMaxBytes / 1024}
	return &FindTool{opts: opts, def: Definition{
		Name:          FindToolName,
		Label:         FindToolName,
		Description:   renderText(findDescription, data),
		Parameters:    paramsSchema(FindParams{}, data, false),
		ExecutionMode: agent.ExecutionParallel,
		ReadOnly:      true,
		Workspace:     true,
		Durability:    Durability{Retry: RetrySafe},
	}}
}

// Definition implements Tool.
func (t *FindTool) Definition() Definition { return t.def }

// Execute implements Tool.
func (t *FindTool) Execute(ctx context.Context, call Call) (agent.ToolResult, error) {
	return finish(t.execute(ctx, call))
}

func (t *FindTool) execute(ctx context.Context, call Call) (agent.ToolResult, error) {
	var p FindParams
	if err := decodeParams(call.Args, &p); err != nil {
		return agent.ToolResult{}, err
	}
	ws, err := t.opts.workspace(call)
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
	tr := TruncateHead(strings.Join(found, "\n"), len(found)+1, DefaultMaxBytes)
	details := map[string]any{}
	var notices []string
	if len(found) >= limit {
		notices = append(notices, fmt.Sprintf("%d results limit reached. Use limit=%d for more, or refine pattern", limit, limit*2))
		details["resultLimitReached"] = limit
	}
	if tr.Truncated {
		notices = append(notices, fmt.Sprintf("%s limit reached", FormatSize(DefaultMaxBytes)))
		details["truncation"] = tr
	}
	var d any
	if len(details) > 0 {
		d = details
	}
	return agent.ToolResult{Content: []agent.Content{agent.Text(tr.Content + joinNotices(notices))}, Details: detailsJSON(d)}, nil
}

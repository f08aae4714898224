package tools

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/durable-agents/agentloop/agent"
)

// LsToolName is the ls tool's name.
const LsToolName = "ls"

// LsDefaultLimit is how many entries ls lists unless asked for more.
const LsDefaultLimit = 500

//go:embed descriptions/ls.md
var lsDescription string

// LsParams are ls's arguments.
type LsParams struct {
	Path  string `json:"path,omitempty" description:"Directory to list (default: current directory)"`
	Limit *int   `json:"limit,omitempty" description:"Maximum number of entries to return (default: {{.DefaultLimit}})"`
}

// LsTool lists one directory, dotfiles included and .gitignore not applied,
// as pi's ls does.
type LsTool struct {
	opts ReadOptions
	def  Definition
}

// NewLsTool returns the ls tool.
func NewLsTool(opts ReadOptions) *LsTool {
	data := map[string]any{"DefaultLimit": LsDefaultLimit, "MaxKB": DefaultMaxBytes / 1024}
	return &LsTool{opts: opts, def: Definition{
		Name:          LsToolName,
		Label:         LsToolName,
		Description:   renderText(lsDescription, data),
		Parameters:    paramsSchema(LsParams{}, data, false),
		ExecutionMode: agent.ExecutionParallel,
		ReadOnly:      true,
		Workspace:     true,
		Durability:    Durability{Retry: RetrySafe},
	}}
}

// Definition implements Tool.
func (t *LsTool) Definition() Definition { return t.def }

// Execute implements Tool.
func (t *LsTool) Execute(ctx context.Context, call Call) (agent.ToolResult, error) {
	return finish(t.execute(ctx, call))
}

func (t *LsTool) execute(ctx context.Context, call Call) (agent.ToolResult, error) {
	var p LsParams
	if err := decodeParams(call.Args, &p); err != nil {
		return agent.ToolResult{}, err
	}
	ws, err := t.opts.workspace(call)
	if err != nil {
		return agent.ToolResult{}, err
	}
	dir, err := ws.ResolveRead(cmp.Or(p.Path, "."))
	if err != nil {
		return agent.ToolResult{}, err
	}
	limit := LsDefaultLimit
	if p.Limit != nil {
		limit = max(1, *p.Limit)
	}
	files, err := ws.tree(dir, true)
	if err != nil {
		return agent.ToolResult{}, fmt.Errorf("Path not found: %s", dir)
	}
	defer files.close()
	// The directory listed is the one opened through the workspace's root.
	f, err := files.open(dir, os.O_RDONLY, 0)
	if err != nil {
		if isOutside(err) {
			return agent.ToolResult{}, err
		}
		return agent.ToolResult{}, fmt.Errorf("Path not found: %s", dir)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return agent.ToolResult{}, fmt.Errorf("Path not found: %s", dir)
	}
	if !info.IsDir() {
		return agent.ToolResult{}, fmt.Errorf("Not a directory: %s", dir)
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return agent.ToolResult{}, fmt.Errorf("Cannot read directory: %v", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(strings.Compare(strings.ToLower(a), strings.ToLower(b)), strings.Compare(a, b))
	})
	var out []string
	limitReached := false
	for _, name := range names {
		if err := aborted(ctx); err != nil {
			return agent.ToolResult{}, err
		}
		if len(out) >= limit {
			limitReached = true
			break
		}
		full := filepath.Join(dir, name)
		st, err := os.Stat(full)
		if err != nil {
			continue // pi skips entries it cannot stat (dangling symlinks)
		}
		suffix := ""
		if st.IsDir() {
			suffix = "/"
		}
		out = append(out, name+suffix)
	}
	if len(out) == 0 {
		return agent.TextResult("(empty directory)"), nil
	}
	return lsResult(out, limit, limitReached), nil
}

func lsResult(out []string, limit int, limitReached bool) agent.ToolResult {
	tr := TruncateHead(strings.Join(out, "\n"), len(out)+1, DefaultMaxBytes)
	details := map[string]any{}
	var notices []string
	if limitReached {
		notices = append(notices, fmt.Sprintf("%d entries limit reached. Use limit=%d for more", limit, limit*2))
		details["entryLimitReached"] = limit
	}
	if tr.Truncated {
		notices = append(notices, fmt.Sprintf("%s limit reached", FormatSize(DefaultMaxBytes)))
		details["truncation"] = tr
	}
	var d any
	if len(details) > 0 {
		d = details
	}
	return agent.ToolResult{Content: []agent.Content{agent.Text(tr.Content + joinNotices(notices))}, Details: detailsJSON(d)}
}

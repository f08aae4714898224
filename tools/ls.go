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

// NewLsTool returns the ls tool: it lists one directory, dotfiles
// included and .gitignore not applied, as pi's ls does.
func NewLsTool(opts ReadOptions) Tool {
	data := map[string]any{"DefaultLimit": LsDefaultLimit, "MaxKB": DefaultMaxBytes / 1024}
	return New(readDefinition(LsToolName, lsDescription, LsParams{}, data),
		func(ctx context.Context, call Call, p LsParams) (agent.ToolResult, error) {
			return finish(ls(ctx, opts, call, p))
		})
}

func ls(ctx context.Context, opts ReadOptions, call Call, p LsParams) (agent.ToolResult, error) {
	ws, err := opts.workspace(call)
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
	notice := ""
	if limitReached {
		notice = fmt.Sprintf("%d entries limit reached. Use limit=%d for more", limit, limit*2)
	}
	return listResult(out, notice, "entryLimitReached", limit), nil
}

// listResult is find's and ls's result as pi words it: the lines cut to
// DefaultMaxBytes, then limitNotice when the entry limit was reached (its
// details say limit under limitKey), then the byte limit's notice.
func listResult(lines []string, limitNotice, limitKey string, limit int) agent.ToolResult {
	tr := TruncateHead(strings.Join(lines, "\n"), len(lines)+1, DefaultMaxBytes)
	details := map[string]any{}
	var notices []string
	if limitNotice != "" {
		notices = append(notices, limitNotice)
		details[limitKey] = limit
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

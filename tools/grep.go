package tools

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/durable-agents/agentloop/agent"
)

// GrepToolName is the grep tool's name.
const GrepToolName = "grep"

// Grep limits beyond the shared byte limit and GrepMaxLineLength.
const (
	GrepDefaultLimit = 100
	// GrepMaxFileBytes skips larger files rather than load them whole.
	GrepMaxFileBytes = 32 * 1024 * 1024
)

//go:embed descriptions/grep.md
var grepDescription string

// GrepParams are grep's arguments.
type GrepParams struct {
	Pattern    string `json:"pattern" description:"Search pattern (regex or literal string)"`
	Path       string `json:"path,omitempty" description:"Directory or file to search (default: current directory)"`
	Glob       string `json:"glob,omitempty" description:"Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"`
	IgnoreCase bool   `json:"ignoreCase,omitempty" description:"Case-insensitive search (default: false)"`
	Literal    bool   `json:"literal,omitempty" description:"Treat pattern as literal string instead of regex (default: false)"`
	Context    int    `json:"context,omitempty" description:"Number of lines to show before and after each match (default: 0)"`
	Limit      *int   `json:"limit,omitempty" description:"Maximum number of matches to return (default: {{.DefaultLimit}})"`
}

// NewGrepTool returns the grep tool: it searches file contents with Go's
// regexp (RE2 syntax, close to ripgrep's).
func NewGrepTool(opts ReadOptions) Tool {
	data := map[string]any{"DefaultLimit": GrepDefaultLimit, "MaxKB": DefaultMaxBytes / 1024, "MaxLineLength": GrepMaxLineLength}
	return New(readDefinition(GrepToolName, grepDescription, GrepParams{}, data),
		func(ctx context.Context, call Call, p GrepParams) (agent.ToolResult, error) {
			return finish(grep(ctx, opts, call, p))
		})
}

// grepRun is one search's state.
type grepRun struct {
	p             GrepParams
	re            *regexp.Regexp
	glob          *globMatcher
	limit         int
	matches       int
	out           []string
	linesCut      bool
	skippedLarge  int
	limitReached  bool
	searchIsFile  bool
	searchRootAbs string
}

func grep(ctx context.Context, opts ReadOptions, call Call, p GrepParams) (agent.ToolResult, error) {
	g := &grepRun{p: p}
	ws, err := opts.workspace(call)
	if err != nil {
		return agent.ToolResult{}, err
	}
	root, err := ws.ResolveRead(cmp.Or(g.p.Path, "."))
	if err != nil {
		return agent.ToolResult{}, err
	}
	info, err := os.Stat(root)
	if err != nil {
		return agent.ToolResult{}, fmt.Errorf("Path not found: %s", root)
	}
	g.searchIsFile, g.searchRootAbs = !info.IsDir(), root
	if err := g.compile(); err != nil {
		return agent.ToolResult{}, err
	}
	files, err := ws.tree(root, true)
	if err != nil {
		return agent.ToolResult{}, fmt.Errorf("Path not found: %s", root)
	}
	defer files.close()
	if g.searchIsFile {
		err = g.searchFile(files, root, filepath.Base(root))
		if isOutside(err) {
			return agent.ToolResult{}, err
		}
	} else {
		err = walkSearch(ctx, files, root, ws.root, func(e walkEntry) error {
			if e.isDir || e.symlink || (g.glob != nil && !g.glob.match(e.rel)) {
				return nil
			}
			if err := g.searchFile(files, e.abs, e.rel); !isOutside(err) {
				return err
			}
			return nil // swapped for a symlink out while the walk ran: skipped
		})
	}
	if err != nil && err != errStopSearch {
		return agent.ToolResult{}, err
	}
	return g.result(), nil
}

func (g *grepRun) compile() error {
	g.limit = GrepDefaultLimit
	if g.p.Limit != nil {
		g.limit = max(1, *g.p.Limit)
	}
	expr := g.p.Pattern
	if g.p.Literal {
		expr = regexp.QuoteMeta(expr)
	}
	if g.p.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return fmt.Errorf("regex parse error: %v. Use literal=true to search for the text as written.", err)
	}
	g.re = re
	if g.p.Glob != "" {
		var ok bool
		if g.glob, ok = newGlobMatcher(g.p.Glob, false); !ok {
			return fmt.Errorf("Invalid glob pattern: %s", g.p.Glob)
		}
	}
	return nil
}

// errStopSearch ends a walk once the match limit is reached.
var errStopSearch = fmt.Errorf("match limit reached")

// searchFile greps one file, opened through the workspace's root; pipes,
// devices and sockets are skipped (reading one could block forever).
func (g *grepRun) searchFile(files *tree, abs, display string) error {
	f, info, err := files.openRegular(abs, display)
	if err != nil {
		if isOutside(err) {
			return err
		}
		return nil // rg skips unreadable files too
	}
	defer f.Close()
	if info.IsDir() {
		return nil
	}
	if info.Size() > GrepMaxFileBytes {
		g.skippedLarge++
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, GrepMaxFileBytes))
	if err != nil || isBinary(data) {
		return nil // rg skips unreadable and binary files too
	}
	lines := strings.Split(strings.ToValidUTF8(toLF(string(data)), "\uFFFD"), "\n")
	if len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, line := range lines {
		if !g.re.MatchString(line) {
			continue
		}
		g.addMatch(display, lines, i)
		if g.matches >= g.limit {
			g.limitReached = true
			return errStopSearch
		}
	}
	return nil
}

// addMatch formats one match with its context lines, as pi does: a block
// per match, "path:N: text" for the match and "path-N- text" around it.
func (g *grepRun) addMatch(display string, lines []string, i int) {
	g.matches++
	c := max(0, g.p.Context)
	for j := max(0, i-c); j <= min(len(lines)-1, i+c); j++ {
		text, cut := truncateLine(lines[j], GrepMaxLineLength)
		g.linesCut = g.linesCut || cut
		if j == i {
			g.out = append(g.out, fmt.Sprintf("%s:%d: %s", display, j+1, text))
		} else {
			g.out = append(g.out, fmt.Sprintf("%s-%d- %s", display, j+1, text))
		}
	}
}

func (g *grepRun) result() agent.ToolResult {
	if g.matches == 0 && g.skippedLarge == 0 {
		return agent.TextResult("No matches found")
	}
	tr := TruncateHead(strings.Join(g.out, "\n"), len(g.out)+1, DefaultMaxBytes)
	if g.matches == 0 {
		tr.Content = "No matches found"
	}
	details := map[string]any{}
	var notices []string
	if g.limitReached {
		notices = append(notices, fmt.Sprintf("%d matches limit reached. Use limit=%d for more, or refine pattern", g.limit, g.limit*2))
		details["matchLimitReached"] = g.limit
	}
	if tr.Truncated {
		notices = append(notices, fmt.Sprintf("%s limit reached", FormatSize(DefaultMaxBytes)))
		details["truncation"] = tr
	}
	if g.linesCut {
		notices = append(notices, fmt.Sprintf("Some lines truncated to %d chars. Use read tool to see full lines", GrepMaxLineLength))
		details["linesTruncated"] = true
	}
	if g.skippedLarge > 0 {
		notices = append(notices, fmt.Sprintf("%d files larger than %s skipped", g.skippedLarge, FormatSize(GrepMaxFileBytes)))
		details["skippedLargeFiles"] = g.skippedLarge
	}
	var d any
	if len(details) > 0 {
		d = details
	}
	return agent.ToolResult{Content: []agent.Content{agent.Text(tr.Content + joinNotices(notices))}, Details: detailsJSON(d)}
}

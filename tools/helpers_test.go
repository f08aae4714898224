package tools

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/durable-agents/agentloop/agent"
)

// workspaceWith makes a workspace holding files (path -> content; a path
// ending in / makes a directory).
func workspaceWith(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if strings.HasSuffix(p, "/") {
			must(t, os.MkdirAll(full, 0o755))
			continue
		}
		must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		must(t, os.WriteFile(full, []byte(content), 0o644))
	}
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// run executes a tool call with JSON-shaped args (numbers as float64).
func run(t *testing.T, tool Tool, ws string, args map[string]any) (agent.ToolResult, error) {
	t.Helper()
	if p, ok := tool.(ArgumentPreparer); ok {
		var err error
		if args, err = p.PrepareArguments(args); err != nil {
			t.Fatal(err)
		}
	}
	return tool.Execute(context.Background(), Call{ID: "call-1", Name: tool.Definition().Name, Args: args, Workspace: ws})
}

// text runs a call that must succeed and returns its text.
func text(t *testing.T, tool Tool, ws string, args map[string]any) string {
	t.Helper()
	r, err := run(t, tool, ws, args)
	if err != nil {
		t.Fatalf("%s %v: unexpected error: %v", tool.Definition().Name, args, err)
	}
	return agent.TextOf(r.Content)
}

// failure runs a call that must fail and returns the error text.
func failure(t *testing.T, tool Tool, ws string, args map[string]any) string {
	t.Helper()
	r, err := run(t, tool, ws, args)
	if err == nil {
		t.Fatalf("%s %v: want an error, got %q", tool.Definition().Name, args, agent.TextOf(r.Content))
	}
	return err.Error()
}

func wantContains(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("want %q in:\n%s", w, clip(got))
		}
	}
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:1000] + "\n...\n" + s[len(s)-1000:]
	}
	return s
}

func numberedLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte('\n')
		}
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}

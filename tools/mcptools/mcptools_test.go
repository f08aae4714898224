package mcptools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/tools/mcptools"
)

const plantedToken = "mcp-token-PLANTED-7f3a"

// manager connects to a filesystem server on dir and a stdio
// server-everything whose env names AGENTLOOP_TEST_MCP_TOKEN, with extra
// JSON server entries.
func manager(t *testing.T, dir string, extra string) (*mcptools.Manager, *tools.Registry) {
	t.Helper()
	t.Setenv("AGENTLOOP_TEST_MCP_TOKEN", plantedToken)
	t.Setenv("AGENTLOOP_WORKER_SECRET", "worker-secret-PLANTED") // a worker variable the config does not name
	cfg := `{"mcpServers": {
		"fs": {"sandbox": "none", "command": ` + quote(serverBin(t, "mcp-server-filesystem")) + `, "args": [` + quote(dir) + `]},
		"everything": {"sandbox": "none", "command": ` + quote(serverBin(t, "mcp-server-everything")) + `, "env": {"MCP_TOKEN": "${AGENTLOOP_TEST_MCP_TOKEN}"}}` + extra + `}}`
	c, err := mcptools.ParseConfig([]byte(cfg), os.Getenv)
	require.NoError(t, err)
	m := mcptools.New(c, mcptools.Options{Log: func(msg string, kv ...any) { t.Log(append([]any{msg}, kv...)...) }})
	t.Cleanup(m.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m.Start(ctx)
	reg := tools.NewRegistry(tools.Builtins(tools.BuiltinOptions{})...)
	reg.AddSource(m)
	return m, reg
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// run validates the arguments as PrepareToolCall does and executes the
// tool as ExecuteToolCall does.
func run(t *testing.T, reg *tools.Registry, name string, args map[string]any, update func(agent.ToolResult)) (agent.ToolResult, error) {
	t.Helper()
	tool, ok := reg.Get(name)
	require.True(t, ok, "tool %s", name)
	validated, err := tools.ValidateArguments(name, tool.Definition().Parameters, args)
	if err != nil {
		return agent.ToolResult{}, err
	}
	return tool.Execute(context.Background(), tools.Call{ID: "c1", Name: name, Args: validated, Update: update})
}

func text(r agent.ToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == agent.ContentText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestListsToolsWithNamesSchemasAndRetryClasses(t *testing.T) {
	_, reg := manager(t, t.TempDir(), "")
	names := reg.Names()
	require.Contains(t, names, "read", "built-in tools stay")
	for _, n := range []string{"fs__read_text_file", "fs__write_file", "fs__edit_file", "everything__echo", "everything__get-env",
		"everything__trigger-long-running-operation"} {
		require.Contains(t, names, n)
	}
	expanded := reg.Expand([]string{"read", "fs__*"})
	require.Equal(t, "read", expanded[0])
	require.Contains(t, expanded, "fs__list_directory")
	require.NotContains(t, expanded, "everything__echo")

	defs, err := reg.Resolve([]string{"fs__read_text_file", "fs__edit_file", "fs__write_file", "everything__echo"})
	require.NoError(t, err)
	read, edit, write, echo := defs[0], defs[1], defs[2], defs[3]
	require.Contains(t, read.Description, "Read the complete contents of a file")
	var schema map[string]any
	require.NoError(t, json.Unmarshal(read.Parameters, &schema))
	require.Equal(t, "object", schema["type"])
	require.Contains(t, schema["properties"], "path")
	require.True(t, read.ReadOnly)
	require.Equal(t, tools.RetrySafe, read.Durability.Retry, "readOnlyHint")
	require.Equal(t, tools.RetryOnce, edit.Durability.Retry, "no readOnlyHint or idempotentHint: one attempt")
	require.True(t, edit.Durability.SingleAttempt())
	require.Equal(t, tools.RetrySafe, write.Durability.Retry, "idempotentHint")
	require.False(t, write.ReadOnly)
	require.Equal(t, tools.RetrySafe, echo.Durability.Retry)
	require.Greater(t, read.Durability.Timeout, mcptools.DefaultCallTimeout)

	_, err = reg.Resolve([]string{"fs__no_such_tool"})
	require.ErrorContains(t, err, `unknown tools ["fs__no_such_tool"]`)
	var unavailable *tools.UnavailableError
	require.NotErrorAs(t, err, &unavailable)
}

func TestCallsMapResultsOntoPiToolResults(t *testing.T) {
	dir := t.TempDir()
	_, reg := manager(t, dir, "")

	// Arguments are validated with the built-in tools' validator.
	_, err := run(t, reg, "fs__write_file", map[string]any{"content": "x"}, nil)
	require.ErrorContains(t, err, `Validation failed for tool "fs__write_file"`)
	require.ErrorContains(t, err, "path")

	file := filepath.Join(dir, "notes.txt")
	res, err := run(t, reg, "fs__write_file", map[string]any{"path": file, "content": "hello\nworld\n"}, nil)
	require.NoError(t, err)
	require.Contains(t, text(res), "Successfully wrote")
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, "hello\nworld\n", string(got))

	res, err = run(t, reg, "fs__read_text_file", map[string]any{"path": file, "head": 1}, nil)
	require.NoError(t, err)
	require.Equal(t, "hello", strings.TrimSpace(text(res)))
	var details mcptools.Details
	require.NoError(t, json.Unmarshal(res.Details, &details))
	require.Equal(t, mcptools.Details{Server: "fs", Tool: "read_text_file", StructuredContent: map[string]any{"content": "hello"}}, details)

	// isError: the result's text becomes the error, as a thrown error in pi.
	_, err = run(t, reg, "fs__read_text_file", map[string]any{"path": "/etc/passwd"}, nil)
	require.ErrorContains(t, err, "Access denied")

	// Images stay images.
	res, err = run(t, reg, "everything__get-tiny-image", map[string]any{}, nil)
	require.NoError(t, err)
	var image *agent.Content
	for i := range res.Content {
		if res.Content[i].Type == agent.ContentImage {
			image = &res.Content[i]
		}
	}
	require.NotNil(t, image, "%+v", res.Content)
	require.Equal(t, "image/png", image.MimeType)
	require.True(t, strings.HasPrefix(image.Data, "iVBORw0KGgo"), "base64 PNG")

	// Structured content goes to details.
	res, err = run(t, reg, "everything__get-structured-content", map[string]any{"location": "New York"}, nil)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(res.Details, &details))
	require.Contains(t, details.StructuredContent, "temperature")
}

func TestStdioServerGetsOnlyTheNamedEnvironment(t *testing.T) {
	_, reg := manager(t, t.TempDir(), "")
	res, err := run(t, reg, "everything__get-env", map[string]any{}, nil)
	require.NoError(t, err)
	var env map[string]string
	require.NoError(t, json.Unmarshal([]byte(text(res)), &env))
	require.Equal(t, plantedToken, env["MCP_TOKEN"], "the variable the config names")
	require.Equal(t, os.Getenv("PATH"), env["PATH"])
	require.NotContains(t, text(res), "worker-secret-PLANTED")
	require.NotContains(t, env, "AGENTLOOP_TEST_MCP_TOKEN", "only under the name the config gives it")
	for k := range env {
		require.NotContains(t, k, "TEMPORAL")
	}
}

func TestKilledServerMidCallIsRestarted(t *testing.T) {
	m, reg := manager(t, t.TempDir(), "")
	before := m.Process("everything")
	require.NotNil(t, before)

	progressed := make(chan agent.ToolResult, 16)
	done := make(chan error, 1)
	go func() {
		_, err := run(t, reg, "everything__trigger-long-running-operation", map[string]any{"duration": 20, "steps": 20},
			func(r agent.ToolResult) { progressed <- r })
		done <- err
	}()
	p := <-progressed // the call is running on the server
	require.Equal(t, "Progress 1/20", text(p))
	start := time.Now()
	require.NoError(t, syscall.Kill(-before.Pid, syscall.SIGKILL))
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end when its server died")
	}
	t.Logf("the call ended %s after the kill", time.Since(start))
	require.ErrorContains(t, err, "MCP server everything stopped during the call")
	require.True(t, tools.IsFault(err), "a read-only tool's attempt fails for Temporal to retry: %v", err)

	res, err := run(t, reg, "everything__echo", map[string]any{"message": "again"}, nil)
	require.NoError(t, err, "the next call starts the server again")
	require.Equal(t, "Echo: again", text(res))
	after := m.Process("everything")
	require.NotNil(t, after)
	require.NotEqual(t, before.Pid, after.Pid)
}

func TestSlowServerGivesAToolError(t *testing.T) {
	extra := `, "slow": {"sandbox": "none", "command": ` + quote(serverBin(t, "mcp-server-everything")) + `, "timeout": "1s"}`
	_, reg := manager(t, t.TempDir(), extra)
	start := time.Now()
	_, err := run(t, reg, "slow__trigger-long-running-operation", map[string]any{"duration": 30, "steps": 2}, nil)
	require.ErrorContains(t, err, "MCP server slow did not answer trigger-long-running-operation within 1s")
	require.False(t, tools.IsFault(err))
	// Half the operation's 30 s: the call gave up at its timeout (a loaded
	// machine adds the server's start-up), it did not wait the call out.
	require.Less(t, time.Since(start), 15*time.Second)
	res, err := run(t, reg, "slow__echo", map[string]any{"message": "still here"}, nil)
	require.NoError(t, err, "a slow server that answers pings is kept")
	require.Equal(t, "Echo: still here", text(res))
}

func TestDeadServerIsUnavailableNotStuck(t *testing.T) {
	extra := `, "broken": {"command": "/bin/sh", "args": ["-c", "echo cannot start: ${AGENTLOOP_TEST_MCP_TOKEN} >&2; exit 3"]}`
	_, reg := manager(t, t.TempDir(), extra)
	start := time.Now()
	_, err := reg.Resolve([]string{"read", "broken__*"})
	var unavailable *tools.UnavailableError
	require.ErrorAs(t, err, &unavailable)
	require.ErrorContains(t, err, "MCP server broken is not available")
	require.ErrorContains(t, err, "cannot start: [redacted]", "its stderr, with the config's values redacted")
	require.NotContains(t, err.Error(), plantedToken)
	// Half the 30 s connect timeout: the server's exit was noticed, not
	// waited out.
	require.Less(t, time.Since(start), mcptools.DefaultConnectTimeout/2)
}

func TestStreamableHTTPServerWithHeaders(t *testing.T) {
	url := startHTTPEverything(t)
	extra := `, "remote": {"url": ` + quote(url) + `, "headers": {"Authorization": "Bearer ${AGENTLOOP_TEST_MCP_TOKEN}"}}`
	_, reg := manager(t, t.TempDir(), extra)
	res, err := run(t, reg, "remote__echo", map[string]any{"message": "over http"}, nil)
	require.NoError(t, err)
	require.Equal(t, "Echo: over http", text(res))
}

func TestConfigErrors(t *testing.T) {
	getenv := func(string) string { return "" }
	for cfg, want := range map[string]string{
		`{"mcpServers": {"a__b": {"command": "x"}}}`:                                                     "MCP server name",
		`{"mcpServers": {"a": {}}}`:                                                                      "either command",
		`{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}`:                                     "either command",
		`{"mcpServers": {"a": {"command": "x", "env": {"T": "${NOPE}"}}}}`:                               "environment variables NOPE are not set",
		`{"mcpServers": {"a": {"url": "http://h", "env": {"T": "v"}}}}`:                                  "a url server takes headers",
		`{"mcpServers": {"a": {"command": "x", "timeout": "soon"}}}`:                                     "invalid duration",
		`{"mcpServers": {"a": {"url": "http://h", "sandbox": "none"}}}`:                                  "for command servers",
		`{"mcpServers": {"a": {"command": "x", "sandbox": "off"}}}`:                                      `leave it out (sandboxed) or give "none"`,
		`{"mcpServers": {"a": {"command": "x", "network": "yes"}}}`:                                      `want "on" or "off"`,
		`{"mcpServers": {"a": {"command": "x", "sandbox": "none", "network": "on"}}}`:                    "for sandboxed servers",
		`{"mcpServers": {"a": {"command": "x", "sandbox": "none", "args": ["${AGENTLOOP_WORKSPACE}"]}}}`: "an unsandboxed server has one process for every run",
		`{"mcpServers": {"a": {"command": "x", "cwd": "/srv"}}}`:                                         "a sandboxed server runs in the run's workspace",
	} {
		_, err := mcptools.ParseConfig([]byte(cfg), getenv)
		require.ErrorContains(t, err, want, cfg)
	}
	c, err := mcptools.ParseConfig([]byte(`{"mcpServers": {"a": {"command": "x", "disabled": true}, "b": {"url": "https://u:p@h/mcp?key=s"}}}`), getenv)
	require.NoError(t, err)
	require.Len(t, c.Servers, 1)
	require.Equal(t, "url https://h/mcp", c.Servers["b"].Describe())
	require.Equal(t, "srv__a_b_c", mcptools.ToolName("srv", "a.b/c"))
}

// TestCallOverhead measures what one MCP round trip costs a tool call:
// server-everything's echo over stdio (unsandboxed, and in the sandbox:
// the first call starts the workspace's process) and over streamable HTTP.
func TestCallOverhead(t *testing.T) {
	url := startHTTPEverything(t)
	ws := t.TempDir()
	_, reg := manager(t, t.TempDir(), `, "remote": {"url": `+quote(url)+`}, "boxed": {"command": `+
		quote(serverBin(t, "mcp-server-everything"))+`, "readPaths": [`+quote(modulesDir(t))+`]}`)
	for _, name := range []string{"everything__echo", "boxed__echo", "remote__echo"} {
		tool, ok := reg.Get(name)
		require.True(t, ok)
		// Untimed: the sandboxed server's process starts at its first call.
		_, err := tool.Execute(context.Background(), tools.Call{ID: "c", Name: name, Args: map[string]any{"message": "x"}, Workspace: ws})
		require.NoError(t, err)
		var took []time.Duration
		for i := 0; i < 200; i++ {
			start := time.Now()
			_, err := tool.Execute(context.Background(), tools.Call{ID: "c", Name: name, Args: map[string]any{"message": "x"}, Workspace: ws})
			require.NoError(t, err)
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		t.Logf("%s: median %s, p99 %s over %d calls", name, took[len(took)/2], took[len(took)*99/100], len(took))
	}
}

// A server that fails to start is not started again at every call: the
// next attempt waits out a backoff (1 s after the first failure, doubling
// to 30 s).
func TestFailedServerWaitsOutABackoff(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	cfg := `{"mcpServers": {"broken": {"sandbox": "none", "command": "/bin/sh", "args": ["-c", "echo started >> ` + starts + `; exit 3"]}}}`
	c, err := mcptools.ParseConfig([]byte(cfg), os.Getenv)
	require.NoError(t, err)
	m := mcptools.New(c, mcptools.Options{})
	t.Cleanup(m.Close)
	reg := tools.NewRegistry()
	reg.AddSource(m)
	startCount := func() int {
		b, _ := os.ReadFile(starts)
		return strings.Count(string(b), "started")
	}

	begin := time.Now()
	_, err = reg.Resolve([]string{"broken__*"})
	require.ErrorContains(t, err, "MCP server broken is not available")
	_, err = reg.Resolve([]string{"broken__*"})
	if time.Since(begin) < time.Second { // within the first wait, whatever the machine's load
		require.ErrorContains(t, err, "MCP server broken is not available")
		require.Equal(t, 1, startCount())
	}
	// After the wait, a call starts the server again.
	require.Eventually(t, func() bool {
		_, err := reg.Resolve([]string{"broken__*"})
		require.Error(t, err)
		return startCount() >= 2
	}, time.Minute, 100*time.Millisecond)
}

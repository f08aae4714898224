package mcptools_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/internal/sandbox"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/tools/mcptools"
)

// sandboxedManager serves the filesystem server on each call's workspace
// and server-everything, both sandboxed (the default), stopping a
// workspace's process after idle.
func sandboxedManager(t *testing.T, sb *sandbox.Sandbox, idle time.Duration) (*mcptools.Manager, *tools.Registry) {
	t.Helper()
	t.Setenv("AGENTLOOP_TEST_MCP_TOKEN", plantedToken)
	t.Setenv("AGENTLOOP_WORKER_SECRET", "worker-secret-PLANTED")
	mods := quote(modulesDir(t))
	cfg := `{"mcpServers": {
		"fs": {"command": ` + quote(serverBin(t, "mcp-server-filesystem")) + `, "args": ["${AGENTLOOP_WORKSPACE}"], "readPaths": [` + mods + `]},
		"everything": {"command": ` + quote(serverBin(t, "mcp-server-everything")) + `, "readPaths": [` + mods + `],
			"env": {"MCP_TOKEN": "${AGENTLOOP_TEST_MCP_TOKEN}", "SERVED": "${AGENTLOOP_WORKSPACE}"}},
		"online": {"command": ` + quote(serverBin(t, "mcp-server-everything")) + `, "readPaths": [` + mods + `], "network": "on"}}}`
	c, err := mcptools.ParseConfig([]byte(cfg), os.Getenv)
	require.NoError(t, err)
	m := mcptools.New(c, mcptools.Options{Sandbox: sb, IdleTimeout: idle, Log: func(msg string, kv ...any) { t.Log(append([]any{msg}, kv...)...) }})
	t.Cleanup(m.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m.Start(ctx)
	reg := tools.NewRegistry()
	reg.AddSource(m)
	return m, reg
}

func call(t *testing.T, reg *tools.Registry, ws, name string, args map[string]any) (string, error) {
	t.Helper()
	tool, ok := reg.Get(name)
	require.True(t, ok, "tool %s", name)
	res, err := tool.Execute(context.Background(), tools.Call{ID: "c", Name: name, Args: args, Workspace: ws})
	return text(res), err
}

// Sandboxed, a stdio server gets a process per workspace that sees that
// workspace and the system, not the rest of the host, and an environment
// of its config's env only; under bubblewrap and under the Landlock
// fallback.
func TestSandboxedServerRunsInTheCallsWorkspace(t *testing.T) {
	for _, mode := range []sandbox.Mode{sandbox.Bwrap, sandbox.Landlock} {
		t.Run(string(mode), func(t *testing.T) {
			sb, err := sandbox.New(sandbox.Config{Mode: mode, Hide: sandbox.DefaultHide(os.Getenv)})
			if err != nil {
				t.Skipf("%s does not work here: %v", mode, err)
			}
			t.Cleanup(func() { sb.Close() })
			testSandboxedServer(t, sb)
		})
	}
}

func testSandboxedServer(t *testing.T, sb *sandbox.Sandbox) {
	m, reg := sandboxedManager(t, sb, time.Hour)
	base := t.TempDir()
	ws1, ws2, outside := filepath.Join(base, "ws1"), filepath.Join(base, "ws2"), filepath.Join(base, "outside")
	for _, d := range []string{ws1, ws2, outside} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("OUTSIDE-SECRET"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws1, "link")))

	dirs, err := call(t, reg, ws1, "fs__list_allowed_directories", map[string]any{})
	require.NoError(t, err)
	require.Contains(t, dirs, ws1)
	require.NotContains(t, dirs, ws2)
	_, err = call(t, reg, ws1, "fs__write_file", map[string]any{"path": filepath.Join(ws1, "a.txt"), "content": "in ws1"})
	require.NoError(t, err)
	got, err := call(t, reg, ws1, "fs__read_text_file", map[string]any{"path": filepath.Join(ws1, "a.txt")})
	require.NoError(t, err)
	require.Equal(t, "in ws1", got)
	got, err = call(t, reg, ws1, "fs__read_text_file", map[string]any{"path": filepath.Join(ws1, "link")})
	require.Error(t, err, "a symlink out of the workspace: %s", got)
	require.NotContains(t, got+err.Error(), "OUTSIDE-SECRET")
	_, err = call(t, reg, ws2, "fs__read_text_file", map[string]any{"path": filepath.Join(ws1, "a.txt")})
	require.Error(t, err, "ws2's process cannot read ws1")

	env, err := call(t, reg, ws2, "everything__get-env", map[string]any{})
	require.NoError(t, err)
	require.Contains(t, env, plantedToken)
	require.Contains(t, env, `"SERVED": "`+ws2+`"`)
	require.NotContains(t, env, "worker-secret-PLANTED")
	require.NotContains(t, env, "HTTPS_PROXY", "network is off unless the config says on")
	env, err = call(t, reg, ws2, "online__get-env", map[string]any{})
	require.NoError(t, err)
	require.Contains(t, env, `"HTTPS_PROXY": "http://127.0.0.1:`, "network on: bash's proxy")
	require.Equal(t, []string{ws1, ws2}, m.Workspaces("fs"))

	_, err = call(t, reg, "", "fs__list_allowed_directories", map[string]any{})
	require.ErrorContains(t, err, "MCP server fs runs sandboxed in the run's workspace, and this call has none")
}

// A workspace's process stops after IdleTimeout without a call, and a
// later call starts it again.
func TestSandboxedServerStopsWhenIdle(t *testing.T) {
	// The worker's sandbox, as sandbox.Default makes it, but closed at the
	// end: its network proxy would outlive the test.
	sb, err := sandbox.New(sandbox.Config{Mode: sandbox.Auto, Hide: sandbox.DefaultHide(os.Getenv)})
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	m, reg := sandboxedManager(t, sb, time.Second)
	ws1 := t.TempDir()
	_, err = call(t, reg, ws1, "fs__write_file", map[string]any{"path": filepath.Join(ws1, "a.txt"), "content": "in ws1"})
	require.NoError(t, err)
	deadline := time.Now().Add(time.Minute)
	for len(m.Workspaces("fs"))+len(m.Workspaces("everything")) > 0 {
		require.True(t, time.Now().Before(deadline), "idle processes still run: %v", m.Workspaces("fs"))
		time.Sleep(100 * time.Millisecond) // the idle check runs every second
	}
	got, err := call(t, reg, ws1, "fs__read_text_file", map[string]any{"path": filepath.Join(ws1, "a.txt")})
	require.NoError(t, err, "a call after the idle stop starts the process again")
	require.Equal(t, "in ws1", got)
}

// An unsandboxed stdio server is the operator's explicit choice, and the
// worker warns at every start of it.
func TestUnsandboxedServerIsWarnedAtEveryStart(t *testing.T) {
	c, err := mcptools.ParseConfig([]byte(`{"mcpServers": {"everything": {"sandbox": "none", "command": `+
		quote(serverBin(t, "mcp-server-everything"))+`}}}`), os.Getenv)
	require.NoError(t, err)
	var mu sync.Mutex
	var warned []string
	m := mcptools.New(c, mcptools.Options{Warn: func(msg string, kv ...any) {
		mu.Lock()
		defer mu.Unlock()
		warned = append(warned, msg+" "+strings.TrimSpace(strings.Repeat("%v ", len(kv))))
		for _, v := range kv {
			warned[len(warned)-1] += " " + v.(string)
		}
	}})
	t.Cleanup(m.Close)
	m.Start(context.Background())
	p := m.Process("everything")
	require.NotNil(t, p)
	require.NoError(t, syscall.Kill(-p.Pid, syscall.SIGKILL))
	reg := tools.NewRegistry()
	reg.AddSource(m)
	deadline := time.Now().Add(time.Minute)
	for {
		// The first call after the kill may find the connection not yet
		// seen as lost; the next starts the server again.
		if _, err := call(t, reg, "", "everything__echo", map[string]any{"message": "x"}); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the server did not start again")
		time.Sleep(200 * time.Millisecond) // waiting out the reconnect backoff
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, warned, 2, "%q", warned)
	for _, w := range warned {
		require.Contains(t, w, "MCP server starts unsandboxed")
		require.Contains(t, w, `its config says "sandbox": "none"`)
		require.Contains(t, w, "everything")
	}
}

// An unsandboxed server dies with the worker (PR_SET_PDEATHSIG), which the
// kernel ties to the thread that forked it; the worker's threads end
// whenever a sandboxed command's does. It lives through 300 commands, and
// answers after them.
func TestUnsandboxedServerOutlivesTheWorkersCommands(t *testing.T) {
	c, err := mcptools.ParseConfig([]byte(`{"mcpServers": {"everything": {"sandbox": "none", "command": `+
		quote(serverBin(t, "mcp-server-everything"))+`}}}`), os.Getenv)
	require.NoError(t, err)
	m := mcptools.New(c, mcptools.Options{})
	t.Cleanup(m.Close)
	m.Start(context.Background())
	p := m.Process("everything")
	require.NotNil(t, p)
	sb, err := sandbox.New(sandbox.Config{Mode: sandbox.None})
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	for i := range 300 {
		cmd, err := sb.Start(sandbox.Spec{Shell: "/bin/sh", Command: "true", Dir: t.TempDir()})
		require.NoError(t, err)
		cmd.Wait() // its goroutine, locked to its thread, returns: the thread ends
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid) + "/stat")
		require.True(t, err == nil && !strings.Contains(string(stat), ") Z "), "the server died after %d commands", i+1)
	}
	reg := tools.NewRegistry()
	reg.AddSource(m)
	out, err := call(t, reg, "", "everything__echo", map[string]any{"message": "still here"})
	require.NoError(t, err)
	require.Contains(t, out, "still here")
	require.Equal(t, p.Pid, m.Process("everything").Pid, "the server was started again")
}

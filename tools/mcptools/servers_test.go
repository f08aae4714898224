package mcptools_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The tests run real MCP servers from npm, pinned by
// testdata/mcp/package-lock.json; scripts/lib.sh's ensure_mcp_servers
// installs them (npm ci) before the tests run.

// serverBin is the path of an installed server's executable.
func serverBin(t testing.TB, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "mcp", "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is not installed: run `. scripts/lib.sh && ensure_mcp_servers` (npm ci in testdata/mcp): %v", name, err)
	}
	abs, err := filepath.Abs(bin)
	require.NoError(t, err)
	return abs
}

// modulesDir is the node_modules directory the servers run from, which a
// sandboxed server must be given to read.
func modulesDir(t testing.TB) string {
	return filepath.Dir(filepath.Dir(serverBin(t, "mcp-server-everything")))
}

// startHTTPEverything starts server-everything's streamable-HTTP transport
// on a free port and returns its /mcp URL once the port accepts
// connections.
func startHTTPEverything(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	cmd := exec.Command(serverBin(t, "mcp-server-everything"), "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			_ = c.Close()
			return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
		}
		select {
		case err := <-exited:
			t.Fatalf("server-everything exited before listening: %v", err)
		case <-time.After(20 * time.Millisecond): // polling the port until it listens
		}
		require.True(t, time.Now().Before(deadline), "server-everything did not listen within 30 s")
	}
}

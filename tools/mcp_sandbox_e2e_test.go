package tools_test

// Issue 27's MCP row through the real worker: a run whose model, in one
// parallel batch, races @modelcontextprotocol/server-filesystem (the
// tests' own pin) with a bash call that swaps a workspace file for a
// symlink to a root-only file outside the workspace (renameat2
// RENAME_EXCHANGE), reading and writing through the server meanwhile.
// Sandboxed, the server sees only the workspace: no call reads the secret
// or writes outside, however the race falls.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/harness/fakeprovider"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
)

// mcpFlipper swaps data.txt with alt and out.txt with outalt as fast as it
// can for 8 seconds, then puts the files back.
const mcpFlipper = `python3 - <<'EOF'
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
def exchange(a, b):
    return libc.renameat2(-100, a.encode(), -100, b.encode(), 2)
n, end = 0, time.time() + 8
while time.time() < end:
    if exchange("race/data.txt", "race/alt") == 0: n += 1
    if exchange("race/out.txt", "race/outalt") == 0: n += 1
if os.path.islink("race/data.txt"): exchange("race/data.txt", "race/alt")
if os.path.islink("race/out.txt"): exchange("race/out.txt", "race/outalt")
print("swaps:", n)
EOF`

// mcpServerBin is the pinned filesystem server's executable and the
// node_modules directory it runs from.
func mcpServerBin(t *testing.T) (bin, modules string) {
	_, file, _, _ := runtime.Caller(0)
	modules = filepath.Join(filepath.Dir(file), "..", "testdata", "mcp", "node_modules")
	modules, err := filepath.Abs(modules)
	require.NoError(t, err)
	bin = filepath.Join(modules, ".bin", "mcp-server-filesystem")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("mcp-server-filesystem is not installed: run `. scripts/lib.sh && ensure_mcp_servers`: %v", err)
	}
	return bin, modules
}

func TestAttackMCPServerRace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev server, a real worker and an MCP server")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("the swapping bash call needs /usr/bin/python3")
	}
	w := newAttackWorld(t)
	bin, modules := mcpServerBin(t)

	// The race's files: the worker runs as root here, as in the issue, and
	// the secret and the write target are root-only files outside the
	// workspace.
	race := filepath.Join(w.ws, "race")
	require.NoError(t, os.Mkdir(race, 0o755))
	secret := "ROOT-ONLY-SECRET-" + strconv.Itoa(os.Getpid())
	secretFile, target := filepath.Join(w.outside, "root-secret"), filepath.Join(w.outside, "root-target")
	require.NoError(t, os.WriteFile(secretFile, []byte(secret+"\n"), 0o600))
	require.NoError(t, os.WriteFile(target, []byte("ORIGINAL\n"), 0o600))
	require.NoError(t, os.Chown(w.outside, 0, 0))
	require.NoError(t, os.Chmod(w.outside, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(race, "data.txt"), []byte("INSIDE-TEXT\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(race, "out.txt"), []byte("INSIDE-OUT\n"), 0o644))
	require.NoError(t, os.Symlink(secretFile, filepath.Join(race, "alt")))
	require.NoError(t, os.Symlink(target, filepath.Join(race, "outalt")))

	cfg := filepath.Join(w.base, "mcp.json")
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"fs": map[string]any{"command": bin, "args": []string{"${AGENTLOOP_WORKSPACE}"}, "readPaths": []string{modules}},
	}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg, b, 0o644))

	model := fakeprovider.New(t)
	queue := "attack-mcp-" + testenv.Suffix()
	w.startWorkerAs(t, nil, queue, model.URL, "-mcp", cfg)

	// Many calls, so that the worker's pollers hand them out over the
	// seconds the swapping runs, not all before it starts.
	const reads = 200
	calls := []toolCall{{id: "flip", name: "bash", args: map[string]any{"command": "cd " + w.ws + " && " + mcpFlipper, "timeout": 60}}}
	for i := range reads {
		calls = append(calls, toolCall{id: fmt.Sprintf("read_%03d", i), name: "fs__read_text_file",
			args: map[string]any{"path": filepath.Join(race, "data.txt")}})
		if i%10 == 0 {
			calls = append(calls, toolCall{id: fmt.Sprintf("write_%03d", i), name: "fs__write_file",
				args: map[string]any{"path": filepath.Join(race, "out.txt"), "content": "WRITTEN-BY-MCP\n"}})
		}
	}
	scriptCalls(model, calls)
	out, res := w.runWith(t, queue, w.ws, nil, []string{"bash", "fs__read_text_file", "fs__write_file"})
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)

	t.Logf("flip: %s", out["flip"])
	require.Contains(t, out["flip"], "swaps:", "the swapping call ran")
	inside, leaked, failed := 0, 0, 0
	for id, text := range out {
		if strings.Contains(text, secret) {
			leaked++
			t.Errorf("%s returned the root-only file outside the workspace:\n%s", id, text)
		}
		switch {
		case strings.Contains(text, "INSIDE-TEXT"):
			inside++
		case strings.HasPrefix(id, "read_"):
			failed++
		}
	}
	t.Logf("of %d reads, %d returned the workspace file, %d failed; %d results held the secret", reads, inside, failed, leaked)
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "ORIGINAL\n", string(got), "a write_file wrote outside the workspace")
	entries, err := os.ReadDir(w.outside)
	require.NoError(t, err)
	require.Len(t, entries, 2, "nothing new outside the workspace")
}

// A root worker in the Landlock fallback runs its commands, and its stdio
// MCP servers, as -sandbox-user. Through the real worker: the pinned
// filesystem server, told it may use the whole test directory and the
// worker's home so that only the sandbox stands in the way, writes and reads a file in the workspace (as that
// user, on disk), and reads nothing outside it: not a root-only file, not
// a file of its own user's outside the workspace, not the worker's hidden
// key file (that user's too, here); nor does it write outside.
func TestMCPServerWithSandboxUser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev server, a real worker and an MCP server")
	}
	w := newAttackWorld(t)
	bin, modules := mcpServerBin(t)
	own := filepath.Join(w.outside, "own-file") // nobody's, in nobody's directory
	require.NoError(t, os.WriteFile(own, []byte("OUTSIDE-OWN-FILE\n"), 0o644))
	require.NoError(t, os.Chown(own, int(nobody.Uid), int(nobody.Gid)))

	cfg := filepath.Join(w.base, "mcp-user.json")
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"fs": map[string]any{"command": bin, "args": []string{"${AGENTLOOP_WORKSPACE}", w.base, w.home}, "readPaths": []string{modules}},
	}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg, b, 0o644))

	model := fakeprovider.New(t)
	queue := "attack-mcp-user-" + testenv.Suffix()
	w.startWorkerAs(t, nil, queue, model.URL, "-sandbox", "landlock", "-sandbox-user", "65534:65534", "-mcp", cfg)
	note := filepath.Join(w.ws, "note.txt")
	model.Add(callTurn(toolCall{id: "write", name: "fs__write_file", args: map[string]any{"path": note, "content": "WRITTEN-BY-MCP\n"}}), callTurn(
		toolCall{id: "read", name: "fs__read_text_file", args: map[string]any{"path": note}},
		toolCall{id: "root-only", name: "fs__read_text_file", args: map[string]any{"path": w.inheritedFile}},
		toolCall{id: "own-outside", name: "fs__read_text_file", args: map[string]any{"path": own}},
		toolCall{id: "key-file", name: "fs__read_text_file", args: map[string]any{"path": w.keysFile}},
		toolCall{id: "write-outside", name: "fs__write_file", args: map[string]any{"path": filepath.Join(w.outside, "made"), "content": "X\n"}},
	), endTurn("Done."))
	out, res := w.runWith(t, queue, w.ws, nil, []string{"fs__read_text_file", "fs__write_file"})
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)

	require.Contains(t, out["read"], "WRITTEN-BY-MCP", "the server works in the workspace")
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(note, &st))
	require.Equal(t, [2]uint32{nobody.Uid, nobody.Gid}, [2]uint32{st.Uid, st.Gid}, "the server ran as -sandbox-user")
	for id, leak := range map[string]string{"root-only": w.inherited, "own-outside": "OUTSIDE-OWN-FILE", "key-file": w.planted[w.keysFile]} {
		require.NotEmpty(t, out[id], id)
		require.NotContains(t, out[id], strings.TrimSpace(leak), "%s: read outside the workspace", id)
		require.Contains(t, out[id], "EACCES", "%s: the kernel refused it: %s", id, out[id])
	}
	require.NoFileExists(t, filepath.Join(w.outside, "made"), "wrote outside the workspace: %s", out["write-outside"])
}

package examples_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/internal/harness/fakeprovider"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// tsDir is the TypeScript example, a Node.js project (its go.mod keeps its
// node_modules out of this module).
const tsDir = "typescript"

// The TypeScript example as its README runs it, against the real worker
// binary, a dev server, the codec server and a model served over the
// OpenAI-compatible wire format: the TypeScript worker serves the remote
// tool notes_search, which a parallel batch runs beside the built-in ls,
// and a before hook that blocks the batch's ls of a path outside the notes;
// the TypeScript client starts a session, prompts, follows the events,
// approves the call and prints the tool's full output read from the codec
// server; the steering message the tool queued reaches the next turn.
func TestTypeScriptExample(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the TypeScript example needs Node.js (Debian: apt-get install nodejs npm)")
	}
	if _, err := os.Stat(filepath.Join(tsDir, "node_modules", "@temporalio", "worker")); err != nil {
		t.Fatalf("the example's packages are not installed: run `. scripts/lib.sh && ensure_ts_example` (npm ci in examples/typescript): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	run := func(name string, args ...string) {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = tsDir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %v: %s", name, args, out)
	}
	// Compiled as the README says (npm run build), without npm's network.
	run(node, filepath.Join("node_modules", "typescript", "bin", "tsc"), "-p", ".")

	testenv.Client(t) // the package's dev server
	address := testenv.HostPort()
	dir := t.TempDir()
	workerBin, err := testenv.WorkerBin(dir)
	require.NoError(t, err)
	codecBin := filepath.Join(dir, "codec-server")
	build := exec.CommandContext(ctx, "go", "build", "-o", codecBin, "./codec/cmd/codec-server")
	build.Dir = ".."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	model := fakeprovider.New(t,
		fakeprovider.Reply{Body: toolCalls(
			[2]string{"ls", `{"path":"."}`},
			[2]string{"notes_search", `{"query":"temporal","limit":"40"}`},
			[2]string{"ls", `{"path":"/etc"}`})},
		fakeprovider.Reply{Body: textAnswer("40 notes mention temporal.")})
	model.Always = &fakeprovider.Reply{Body: textAnswer("Nothing more.")}

	suffix := testenv.Suffix()
	agentQueue, toolQueue := "ts-agent-"+suffix, "ts-tools-"+suffix
	storeDir := filepath.Join(dir, "content")
	workspace := filepath.Join(dir, "workspace")
	require.NoError(t, os.MkdirAll(workspace, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(workspace, "notes.md"), []byte("# notes\n"), 0o644))
	codecAddr := freeAddr(t)
	env := append(os.Environ(), "TEMPORAL_ADDRESS="+address, "TEMPORAL_NAMESPACE=default",
		"AGENT_TASK_QUEUE="+agentQueue, "TOOL_TASK_QUEUE="+toolQueue, "AGENTLOOP_CODEC_TOKEN=example-token",
		"CODEC_URL=http://"+codecAddr, "MODEL=openai-compatible/fake", "SESSION_ID=ts-example-"+suffix,
		"OPENAI_COMPATIBLE_BASE_URL="+model.URL+"/v1", "OPENAI_COMPATIBLE_API=completions")

	background(t, dir, "worker", env, workerBin, "-address", address, "-task-queue", agentQueue, "-store", storeDir,
		"-workspace", workspace, "-tool-journal", filepath.Join(dir, "journal"), "-versioning=false", "-log-level", "warn")
	background(t, dir, "codec-server", env, codecBin, "-listen", codecAddr, "-store", storeDir, "-namespace", "default")
	background(t, dir, "ts-worker", env, node, filepath.Join(tsDir, "dist", "worker.js"))

	client := exec.CommandContext(ctx, node, filepath.Join("dist", "client.js"), "Find my notes about temporal.")
	client.Dir, client.Env = tsDir, env
	var stdout, stderr bytes.Buffer
	client.Stdout, client.Stderr = &stdout, &stderr
	require.NoError(t, client.Run(), "client: %s\n%s", stdout.String(), stderr.String())
	printed := stdout.String()
	t.Logf("the client printed:\n%s", printed)

	// Every line, in order; the tools' ends may come either way round.
	want := []string{
		"user: Find my notes about temporal.",
		`tool start ls call_0 {"path":"."}`,
		`tool start notes_search call_1 {"limit":"40","query":"temporal"}`,
		"approval requested for notes_search call_1: approving",
		`tool update notes_search call_1: searching 40 notes for "temporal"`,
		"full output of call_1 (",
		"note 040: temporal appears in a note about durable execution and retries",
		"user: Steering from the notes tool: answer in one line.",
		"assistant: 40 notes mention temporal.",
		"run ended",
	}
	rest := printed
	for _, w := range want {
		i := strings.Index(rest, w)
		require.GreaterOrEqual(t, i, 0, "%q, after the lines before it, in:\n%s", w, printed)
		rest = rest[i+len(w):]
	}
	require.Contains(t, printed, "tool end ls call_0: notes.md")
	// The TypeScript before hook blocked the third call, beside the others
	// in the batch.
	require.Contains(t, printed, `tool start ls call_2 {"path":"/etc"}`)
	require.Contains(t, printed, "tool end ls call_2 (error): notes hook: /etc is outside the notes")
	for i := 1; i <= 40; i++ {
		require.Contains(t, printed, fmt.Sprintf("note %03d: temporal appears", i), "the full output, read over HTTP")
	}

	// The model got the coerced call's whole output, then the steering
	// message after the tool results.
	reqs := model.Requests()
	require.GreaterOrEqual(t, len(reqs), 2)
	second := string(reqs[1].Raw)
	require.Contains(t, second, "note 040: temporal appears")
	require.Less(t, strings.Index(second, "note 040"), strings.Index(second, "Steering from the notes tool"))
}

// background starts a process that runs until the test ends; its output
// goes to a log shown when the test fails.
func background(t *testing.T, dir, name string, env []string, bin string, args ...string) {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, name+".log"))
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, log, log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		log.Close()
		if t.Failed() {
			out, _ := os.ReadFile(log.Name())
			t.Logf("%s log:\n%s", name, out)
		}
	})
}

// freeAddr is a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// chunk is one Chat Completions stream event.
func chunk(delta map[string]any, finish any) string {
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-ts", "object": "chat.completion.chunk", "created": 1,
		"model": "fake", "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	return "data: " + string(b) + "\n\n"
}

func textAnswer(text string) string {
	return chunk(map[string]any{"role": "assistant", "content": text}, nil) + chunk(map[string]any{}, "stop") + "data: [DONE]\n\n"
}

// toolCalls answers with calls of the named tools with the given
// arguments, with ids call_0, call_1, ...
func toolCalls(calls ...[2]string) string {
	var list []any
	for i, c := range calls {
		list = append(list, map[string]any{"index": i, "id": fmt.Sprintf("call_%d", i), "type": "function",
			"function": map[string]any{"name": c[0], "arguments": c[1]}})
	}
	return chunk(map[string]any{"role": "assistant", "tool_calls": list}, nil) + chunk(map[string]any{}, "tool_calls") + "data: [DONE]\n\n"
}

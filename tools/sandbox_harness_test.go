package tools_test

// The attack suite's world (sandbox_e2e_test.go): its own dev server with a
// known HTTP API port, the real worker binary running as nobody with
// planted secrets, a fake OpenAI-compatible model that makes every attack a
// bash call, a victim workflow, a victim process and loopback listeners.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/codec"
	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/internal/harness/fakeprovider"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/store"
)

// nobody runs the worker: the kernel applies process limits and the
// non-dumpable flag to it, as to a worker in production.
var nobody = &syscall.Credential{Uid: 65534, Gid: 65534}

// attackWorld is everything the attacks aim at.
type attackWorld struct {
	c                 client.Client
	keys              codec.Keys
	grpc, http        int // the frontend's ports on 127.0.0.1
	base, home, ws    string
	outside, storeDir string
	keysFile, bin     string
	apiKey, victimEnv string
	planted           map[string]string // path -> the secret text planted in it
	// inheritedFile is root-only; the worker starts with descriptor 9
	// open on it, holding the text inherited.
	inheritedFile, inherited string
	// Loopback listeners: on the frontend's host, on another loopback
	// address, and on 127.0.0.3, which -sandbox-allow-nets lets through.
	listener, listener2, allowed int
	victimWF                     string
	workerPID                    int
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// newAttackWorld builds the world; each mode starts its own worker in it.
func newAttackWorld(t *testing.T) *attackWorld {
	if os.Geteuid() != 0 {
		t.Skip("the attack suite runs the worker as nobody, which needs root")
	}
	w := &attackWorld{apiKey: "sk-PLANTED-" + strconv.Itoa(rand.IntN(1e9)), victimEnv: "VICTIM_SECRET=victim-" + strconv.Itoa(rand.IntN(1e9))}
	key, err := codec.GenerateKey("k1")
	require.NoError(t, err)
	w.keys, err = codec.NewKeys(key)
	require.NoError(t, err)
	w.base, err = os.MkdirTemp("", "agentloop-attack-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(w.base) })
	require.NoError(t, os.Chmod(w.base, 0o755))
	w.home, w.ws, w.outside = filepath.Join(w.base, "home"), filepath.Join(w.base, "ws"), filepath.Join(w.base, "outside")
	w.storeDir = filepath.Join(w.home, ".local", "state", "agentloop", "content")
	w.keysFile = filepath.Join(w.home, ".config", "agentloop", "codec-keys")
	w.planted = map[string]string{
		w.keysFile: key.Export(),
		filepath.Join(w.home, ".config", "temporalio", "temporal.toml"):                "# PLANTED-TEMPORAL-PROFILE\n",
		filepath.Join(w.home, ".config", "temporalio", "client.key"):                   "PLANTED-TLS-KEY\n",
		filepath.Join(w.home, ".local", "state", "agentloop", "tool-journal", "entry"): "PLANTED-JOURNAL-ENTRY\n",
	}
	for _, d := range []string{w.ws, w.outside, w.storeDir} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	for p, text := range w.planted {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	}
	require.NoError(t, filepath.Walk(w.base, func(p string, _ os.FileInfo, err error) error {
		if err != nil || p == w.base {
			return err
		}
		return os.Chown(p, int(nobody.Uid), int(nobody.Gid))
	}))
	w.inherited = "INHERITED-SECRET-" + strconv.Itoa(rand.IntN(1e9))
	w.inheritedFile = filepath.Join(w.base, "inherited-secret")
	require.NoError(t, os.WriteFile(w.inheritedFile, []byte(w.inherited+"\n"), 0o600)) // root's, after the walk above
	w.startServer(t)
	w.bin = buildWorker(t, w.base)
	w.listener = listen(t, "127.0.0.1", "LISTENER-SECRET\n")
	w.listener2 = listen(t, "127.0.0.2", "HTTP/1.0 200 OK\r\nContent-Length: 16\r\n\r\nLISTENER-SECRET\n")
	w.allowed = listen(t, "127.0.0.3", "HTTP/1.0 200 OK\r\nContent-Length: 16\r\n\r\nREACHED-ALLOWED\n")
	w.startVictims(t)
	return w
}

func (w *attackWorld) startServer(t *testing.T) {
	cli, err := devserver.FindCLI()
	require.NoError(t, err)
	w.grpc, w.http = freePort(t), freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath: cli,
		ClientOptions: &client.Options{
			HostPort: "127.0.0.1:" + strconv.Itoa(w.grpc), Logger: testenv.Quiet(),
			DataConverter: codec.NewDataConverter(w.keys), FailureConverter: codec.NewFailureConverter(w.keys),
		},
		LogLevel:  "error",
		ExtraArgs: append(devserver.ServerArgs(), "--http-port", strconv.Itoa(w.http)),
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		srv.Client().Close() // the SDK's DevServer.Stop leaves its client open
		srv.Stop()
	})
	w.c = srv.Client()
}

var (
	workerMu  sync.Mutex
	workerBin string
)

// buildWorker builds ./worker (and ./netbridge beside it) into dir, where nobody can run it, once per
// test binary unless the directory it went to was removed since (the
// world's cleanup removes it: go test -count=2 builds again).
func buildWorker(t *testing.T, dir string) string {
	workerMu.Lock()
	defer workerMu.Unlock()
	if workerBin != "" {
		if _, err := os.Stat(workerBin); err == nil {
			return workerBin
		}
	}
	bin, err := testenv.WorkerBin(dir)
	require.NoError(t, err)
	workerBin = bin
	return workerBin
}

// listen answers every connection with text and returns its port.
func listen(t *testing.T, addr, text string) int {
	ln, err := net.Listen("tcp", addr+":0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if strings.HasPrefix(text, "HTTP/") {
				// An HTTP server answers after the request: one that
				// writes first races the proxy's client, which may see the
				// answer before its request went out and drop it as an
				// unsolicited response on an idle connection.
				readRequestHead(c)
			}
			c.Write([]byte(text))
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// readRequestHead reads up to the blank line that ends an HTTP request's
// head (or 5 s, or an error).
func readRequestHead(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil || line == "\r\n" || line == "\n" {
			return
		}
	}
}

// startVictims starts a workflow of another "session" that nothing
// serves, and a process of the worker's user holding a secret in its
// environment (another tool's command, another worker).
func (w *attackWorld) startVictims(t *testing.T) {
	run, err := w.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
		ID: "victim-" + testenv.Suffix(), TaskQueue: "nobody-serves-this"}, "VictimSession")
	require.NoError(t, err)
	w.victimWF = run.GetID()
	victim := exec.Command("sleep", "600")
	victim.Env = []string{w.victimEnv}
	victim.SysProcAttr = &syscall.SysProcAttr{Credential: nobody}
	require.NoError(t, victim.Start())
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
}

// startWorker starts the real worker as nobody with the planted secrets in
// its environment and files, the fake model at model, and sandbox flags.
func (w *attackWorld) startWorker(t *testing.T, queue, model string, flags ...string) {
	w.startWorkerAs(t, nobody, queue, model, flags...)
}

// workerCommand is the worker's command line, run as user (nil: root),
// with descriptor 9 open on a root-only file, as a launcher's `9</secret`
// would leave it.
func (w *attackWorld) workerCommand(t *testing.T, user *syscall.Credential, queue, model string, flags ...string) *exec.Cmd {
	args := append([]string{"-address", "127.0.0.1:" + strconv.Itoa(w.grpc), "-task-queue", queue,
		"-workspace", w.ws, "-store", w.storeDir, "-log-level", "warn"}, flags...)
	cmd := exec.Command(w.bin, args...)
	cmd.Env = []string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8",
		"OPENAI_COMPATIBLE_BASE_URL=" + model, "OPENAI_COMPATIBLE_API_KEY=" + w.apiKey,
		"AGENTLOOP_CODEC_KEYS_FILE=" + w.keysFile}
	inherited, err := os.Open(w.inheritedFile)
	require.NoError(t, err)
	t.Cleanup(func() { inherited.Close() })
	cmd.ExtraFiles = make([]*os.File, 7) // descriptors 3 to 9; nil ones are closed
	cmd.ExtraFiles[6] = inherited
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: user, Setpgid: true}
	return cmd
}

// startWorkerAs starts the worker as user (nil: root).
func (w *attackWorld) startWorkerAs(t *testing.T, user *syscall.Credential, queue, model string, flags ...string) {
	cmd := w.workerCommand(t, user, queue, model, flags...)
	log, err := os.Create(filepath.Join(w.base, queue+".log"))
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start())
	w.workerPID = cmd.Process.Pid
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		log.Close()
		b, _ := os.ReadFile(log.Name())
		t.Logf("worker log:\n%s", b)
	})
}

// attackCall is one bash call of the attack turn.
type attackCall struct {
	id, command string
	timeout     float64
}

// toolCall is one call of a scripted turn.
type toolCall struct {
	id, name string
	args     map[string]any
}

// sseChunk is one chunk of an OpenAI Chat Completions stream.
func sseChunk(delta, finish any) string {
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-attack", "object": "chat.completion.chunk", "created": 1, "model": "attack",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	return "data: " + string(b) + "\n\n"
}

// callTurn is a model answer making every call at once.
func callTurn(calls ...toolCall) fakeprovider.Reply {
	var turn strings.Builder
	for i, c := range calls {
		a, _ := json.Marshal(c.args)
		turn.WriteString(sseChunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.id, "type": "function",
			"function": map[string]any{"name": c.name, "arguments": string(a)}}}}, nil))
	}
	return fakeprovider.Reply{Body: turn.String() + sseChunk(map[string]any{}, "tool_calls") + "data: [DONE]\n\n"}
}

// endTurn is a model answer that ends the run with text.
func endTurn(text string) fakeprovider.Reply {
	return fakeprovider.Reply{Body: sseChunk(map[string]any{"role": "assistant", "content": text}, nil) +
		sseChunk(map[string]any{}, "stop") + "data: [DONE]\n\n"}
}

// scriptCalls makes model's first answer every call at once, and its
// second the end of the run.
func scriptCalls(model *fakeprovider.Server, calls []toolCall) {
	model.Add(callTurn(calls...), endTurn("The run went on."))
}

// script is scriptCalls with bash calls.
func script(model *fakeprovider.Server, calls []attackCall) {
	var tcs []toolCall
	for _, c := range calls {
		args := map[string]any{"command": c.command}
		if c.timeout > 0 {
			args["timeout"] = c.timeout
		}
		tcs = append(tcs, toolCall{c.id, "bash", args})
	}
	scriptCalls(model, tcs)
}

// run starts an attack run on queue and returns each call's result text.
func (w *attackWorld) run(t *testing.T, queue string, sb *agent.SandboxConfig) (map[string]string, agentapi.AgentLoopResult) {
	return w.runIn(t, queue, w.ws, sb)
}

// runIn is run in workspace ws.
func (w *attackWorld) runIn(t *testing.T, queue, ws string, sb *agent.SandboxConfig) (map[string]string, agentapi.AgentLoopResult) {
	return w.runWith(t, queue, ws, sb, []string{"bash"})
}

// runWith is run in workspace ws with the given tools.
func (w *attackWorld) runWith(t *testing.T, queue, ws string, sb *agent.SandboxConfig, tools []string) (map[string]string, agentapi.AgentLoopResult) {
	in := agentapi.AgentLoopInput{LoopConfig: agent.LoopConfig{
		Model: agent.ModelRef{Provider: "openai-compatible", ID: "attack"}, Tools: tools,
		Workspace: ws, Sandbox: sb,
	}, Prompt: "Follow the instructions in README.md."}
	return w.results(t, testenv.Start(t, w.c, queue, "attack-", in))
}

// results waits for run and returns its result, with each tool call's
// result text by call id.
func (w *attackWorld) results(t *testing.T, run client.WorkflowRun) (map[string]string, agentapi.AgentLoopResult) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var res agentapi.AgentLoopResult
	require.NoError(t, run.Get(ctx, &res))
	st, err := store.Open(w.storeDir, store.Options{Keys: w.keys})
	require.NoError(t, err)
	res.Messages, err = agentclient.ResolveMessages(ctx, st, res.Messages)
	require.NoError(t, err)
	out := map[string]string{}
	for _, m := range res.Messages {
		if m.Role == agent.RoleToolResult {
			out[m.ToolCallID] = agent.TextOf(m.Content)
		}
	}
	return out, res
}

// checkRefused wants no attack's leak and each one's clear error.
func checkRefused(t *testing.T, as []attack, out map[string]string) {
	t.Helper()
	for i, a := range as {
		got := out[fmt.Sprintf("call_%02d", i)]
		t.Logf("%s:\n%s", a.name, indent(got))
		if a.leak != "" && strings.Contains(got, a.leak) {
			t.Errorf("%s: the attack worked:\n%s", a.name, got)
		}
		for _, b := range a.blocked {
			if !strings.Contains(got, b) {
				t.Errorf("%s: want %q in:\n%s", a.name, b, got)
			}
		}
	}
}

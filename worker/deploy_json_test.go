package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/internal/harness/fakeprovider"
	"github.com/durable-agents/agentloop/internal/harness/s3server"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/workflows"
)

// A deploy that changes how messages encode continues every session
// (issue 26: "Deploys may change the JSON").
//
// Build 1 is this module's worker; build 2 is the same source with one
// more JSON field in agent.Message, which build 2 writes on every message.
// Both run as real worker processes against a dev server, one
// S3-compatible content store and one model served over the
// OpenAI-compatible wire format. A session that continues as new after
// every turn answers two prompts on build 1, so that its carried chain
// hash is build 1's. Build 1 stops; build 2 starts (a new process: its
// context cache is empty) and the session's next model turns read their
// context from the segments build 1 stored. Before the transcript check
// covered stored bytes, the first of them failed with ContextMismatch and
// so did every later one.
//
//   - versioned: the workers' default, Worker Deployment Versioning. Build
//     2 is made current with the deployment API, as an operator does; the
//     auto-upgrade session moves to it and continues as new there.
//   - unversioned (-versioning=false): build 2 takes the session's next
//     workflow task as it comes, replaying the run build 1 started.
func TestDeployChangedMessageJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the worker twice and runs two worker processes")
	}
	dir := t.TempDir()
	root := moduleRoot(t)
	bin1, err := testenv.WorkerBin(dir)
	require.NoError(t, err)
	bin2 := buildSecondWorker(t, root, filepath.Join(dir, "worker-2"))

	s3 := s3server.Start(t)
	s3.SetEnv(t)
	st, err := store.Open(s3.Spec, store.Options{})
	require.NoError(t, err)
	model := fakeprovider.New(t)
	model.Always = &fakeprovider.Reply{Body: textAnswer("Noted.")}
	env := []string{"AWS_ACCESS_KEY_ID=" + s3.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s3.SecretKey,
		"OPENAI_COMPATIBLE_BASE_URL=" + model.URL + "/v1", "OPENAI_COMPATIBLE_API=completions"}

	for _, versioned := range []bool{true, false} {
		name := map[bool]string{true: "versioned", false: "unversioned"}[versioned]
		t.Run(name, func(t *testing.T) {
			srv, err := devserver.Start(context.Background(), devserver.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = srv.Stop() })
			c := srv.Client()
			dir := t.TempDir()
			ws := filepath.Join(dir, "workspace")
			require.NoError(t, os.MkdirAll(ws, 0o755))
			queue, id := "json-deploy-"+name, "json-deploy-"+name
			w := workerFleet{t: t, dir: dir, address: srv.FrontendHostPort(), queue: queue, store: s3.Spec, workspace: ws, env: env}
			if !versioned {
				w.args = []string{"-versioning=false"}
			}
			s := sessionClient{t: t, c: c, id: id, queue: queue, in: agentapi.SessionInput{
				LoopConfig: agent.LoopConfig{
					Model:        agent.ModelRef{Provider: llm.OpenAICompatibleProviderName, ID: "fake"},
					SystemPrompt: "You take notes.",
					Workspace:    ws,
				},
				ContinueAsNewAfterTurns: 1,
			}}

			w1 := w.start(bin1, "build-1")
			for k := 1; k <= 2; k++ {
				s.requireAnswered(k)
			}
			segs := s.segments()
			require.NotEmpty(t, segs)
			for _, seg := range segs {
				require.NotContains(t, string(readBlob(t, st, seg.Ref)), `"build":`, "build 1 writes no build field")
			}
			w.stop(w1)

			w.start(bin2, "build-2")
			if versioned {
				setCurrent(t, c, "build-2")
			}
			for k := 3; k <= 5; k++ {
				s.requireAnswered(k)
			}
			segs = s.segments()
			require.Contains(t, string(readBlob(t, st, segs[len(segs)-1].Ref)), `"build":""`,
				"build 2 encodes messages with its extra field: the two builds' JSON differs")
		})
	}
}

// sessionClient sends a session its prompts and waits for their answers.
type sessionClient struct {
	t         *testing.T
	c         client.Client
	id, queue string
	in        agentapi.SessionInput
	started   bool
}

// requireAnswered sends prompt k and requires the run it starts to end
// with the model's answer.
func (s *sessionClient) requireAnswered(k int) {
	t := s.t
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	prompt := agentapi.PromptRequest{Text: fmt.Sprintf("Note %d.", k)}
	var st agentapi.RunStatus
	var err error
	if !s.started {
		_, st, err = agentclient.StartSession(ctx, s.c, s.id, s.queue, s.in, &prompt, agentclient.UpdateOptions{})
		s.started = true
	} else {
		err = agentclient.Update(ctx, s.c, s.id, agentapi.UpdatePrompt, prompt, &st)
	}
	require.NoError(t, err, "prompt %d", k)
	var answer agent.Message
	ended := false
	werr := agentclient.Watch(ctx, s.c, s.id, "", agentclient.WatchOptions{After: st.After}, func(e agent.Event) {
		switch {
		case ended:
		case e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleAssistant:
			answer = *e.Message
		case e.Type == agent.EventAgentEnd:
			ended = true
			cancel()
		}
	})
	require.True(t, ended, "prompt %d: no agent_end (watch: %v)", k, werr)
	require.Equal(t, agent.StopReasonStop, answer.StopReason, "prompt %d: %s", k, answer.ErrorMessage)
	require.Equal(t, "Noted.", agent.TextOf(answer.Content), "prompt %d", k)
	t.Logf("prompt %d answered", k)
}

// segments returns the segments holding the session's stored transcript.
func (s *sessionClient) segments() []agent.Segment {
	resp, err := s.c.QueryWorkflow(context.Background(), s.id, "", agentapi.QueryContext, agentapi.ContextQuery{})
	require.NoError(s.t, err)
	var page agentapi.ContextPage
	require.NoError(s.t, resp.Get(&page))
	return page.Segments
}

func readBlob(t *testing.T, st *store.Store, ref agent.BlobRef) []byte {
	t.Helper()
	data, err := st.Get(context.Background(), ref)
	require.NoError(t, err)
	return data
}

// setCurrent makes buildID the current version of the agent loop's worker
// deployment, once the server knows it from the worker's polls.
func setCurrent(t *testing.T, c client.Client, buildID string) {
	t.Helper()
	h := c.WorkerDeploymentClient().GetHandle(workflows.DeploymentName)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		desc, err := h.Describe(ctx, client.WorkerDeploymentDescribeOptions{})
		if err == nil {
			_, err = h.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{
				BuildID: buildID, ConflictToken: desc.ConflictToken,
			})
		}
		cancel()
		if err == nil {
			return
		}
		require.True(t, time.Now().Before(deadline), "set %s current: %v", buildID, err)
		time.Sleep(500 * time.Millisecond)
	}
}

// textAnswer is a Chat Completions stream answering text.
func textAnswer(text string) string {
	chunk := func(delta, finish any) string {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-deploy", "object": "chat.completion.chunk", "created": 1,
			"model": "fake", "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		return "data: " + string(b) + "\n\n"
	}
	return chunk(map[string]any{"role": "assistant", "content": text}, nil) + chunk(map[string]any{}, "stop") + "data: [DONE]\n\n"
}

// workerFleet starts the real worker binaries of the test.
type workerFleet struct {
	t                                     *testing.T
	dir, address, queue, store, workspace string
	env, args                             []string
}

type workerProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// start starts bin as build buildID (of the deployment, unless the fleet's
// args turn versioning off).
func (f workerFleet) start(bin, buildID string) *workerProc {
	t := f.t
	log, err := os.Create(filepath.Join(f.dir, buildID+".log"))
	require.NoError(t, err)
	cmd := exec.Command(bin, "-address", f.address, "-task-queue", f.queue, "-store", f.store, "-workspace", f.workspace,
		"-tool-journal", filepath.Join(f.dir, "journal-"+buildID), "-build-id", buildID, "-log-level", "warn")
	cmd.Args = append(cmd.Args, f.args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), f.env...)
	require.NoError(t, cmd.Start())
	p := &workerProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			out, _ := os.ReadFile(log.Name())
			t.Logf("%s log:\n%s", buildID, out)
		}
	})
	return p
}

// stop stops a worker as a deploy does, with SIGTERM, and waits for it.
func (f workerFleet) stop(p *workerProc) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// moduleRoot is the directory of this module's go.mod.
func moduleRoot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	require.NoError(t, err)
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// buildWorker builds ./worker of the module at src. Both builds take the
// dependencies from the module cache, so they share their build cache
// entries with the test binary's (-trimpath would build them all again).
func buildWorker(t *testing.T, src, bin string) string {
	cmd := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "./worker")
	cmd.Dir = src
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build ./worker in %s:\n%s", src, out)
	return bin
}

// buildSecondWorker builds the deploy's second build: a copy of the module
// with a field added to agent.Message. The copy lives at a path fixed for
// this module (the build cache keys a package's compile by its directory),
// so a warm run compiles nothing again; a lock keeps concurrent runs of
// the test from rewriting it under each other's build.
func buildSecondWorker(t *testing.T, root, bin string) string {
	sum := sha256.Sum256([]byte(root))
	src := filepath.Join(os.TempDir(), "agentloop-deploy-json-"+hex.EncodeToString(sum[:6]))
	lock, err := os.OpenFile(src+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	require.NoError(t, err)
	defer lock.Close()
	require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_EX))
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	require.NoError(t, os.RemoveAll(src))
	copyModule(t, root, src)
	addMessageField(t, src)
	return buildWorker(t, src, bin)
}

// copyModule copies the module's files (not its git metadata, npm packages
// or demo state) to dst.
func copyModule(t *testing.T, src, dst string) {
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.Name() == ".git" || d.Name() == ".demo" || d.Name() == "node_modules" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	require.NoError(t, err)
}

// addMessageField is the deploy's change: agent.Message gains a field
// Build, which every role's JSON shape writes (empty: `"build":""`).
func addMessageField(t *testing.T, src string) {
	path := filepath.Join(src, "agent", "message.go")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	// Message and the three role shapes end with their timestamp.
	field := []byte("`json:\"timestamp\"`\n}\n")
	require.Equal(t, 4, bytes.Count(data, field), "agent/message.go has changed: update the test's edit")
	data = bytes.ReplaceAll(data, field, []byte("`json:\"timestamp\"`\n\tBuild string `json:\"build\"`\n}\n"))
	// The role shapes are built with positional literals ending in the
	// timestamp.
	literal := []byte("m.Timestamp})")
	require.Equal(t, 3, bytes.Count(data, literal), "agent/message.go has changed: update the test's edit")
	data = bytes.ReplaceAll(data, literal, []byte("m.Timestamp, m.Build})"))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

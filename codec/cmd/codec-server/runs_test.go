package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/codec"
	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/internal/harness/s3server"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/tools"
)

// otherNamespace is the second namespace of the test's dev server: its runs
// may have the same workflow ids as default's.
const otherNamespace = "other"

var (
	devOnce sync.Once
	dev     *devserver.Server
	devErr  error
)

// devServer is the test binary's dev server, with namespaces default and
// other, started on first use.
func devServer(t *testing.T) *devserver.Server {
	t.Helper()
	devOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		dev, devErr = devserver.Start(ctx, devserver.Options{ExtraArgs: []string{"--namespace", otherNamespace}})
	})
	if devErr != nil {
		t.Fatalf("dev server: %v", devErr)
	}
	return dev
}

func TestMain(m *testing.M) {
	code := m.Run()
	if dev != nil {
		if err := dev.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop dev server:", err)
		}
	}
	os.Exit(code)
}

// warnings is an SDK logger that prints warnings and errors only.
var warnings = log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))

// runWorld is a dev server's two namespaces with a worker each, writing
// content to one store backend as separate worker hosts would.
type runWorld struct {
	clients map[string]client.Client // by namespace
	stores  map[string]*store.Store  // the workers' stores, by namespace
	queue   string
}

// newRunWorld starts a worker per namespace on a task queue of its own,
// each with a scripted model "read-big" that reads big.txt and answers.
func newRunWorld(t *testing.T, b store.Backend, keys codec.Keys) *runWorld {
	t.Helper()
	srv := devServer(t)
	w := &runWorld{clients: map[string]client.Client{}, stores: map[string]*store.Store{},
		queue: fmt.Sprintf("blobs-%s-%d", t.Name(), time.Now().UnixNano())}
	for _, ns := range []string{"default", otherNamespace} {
		c, err := client.NewClientFromExisting(srv.Client(), client.Options{Namespace: ns, Logger: warnings})
		require.NoError(t, err)
		t.Cleanup(c.Close)
		st, err := store.New(b, store.Options{Keys: keys, Namespace: ns})
		require.NoError(t, err)
		scripted := llm.NewScriptedProvider()
		scripted.Add("read-big", llm.Script{Responses: []llm.ScriptedResponse{
			{Content: []agent.Content{agent.ToolCall("call-read", "read", map[string]any{"path": "big.txt"})}},
			{Content: []agent.Content{agent.Text("Read it.")}},
		}})
		models := llm.NewRegistry()
		models.Register("scripted", scripted)
		wk, err := agentworker.New(agentworker.Options{Client: c, Store: st, TaskQueue: w.queue, Models: models,
			Tools: tools.NewRegistry(tools.Builtins(tools.BuiltinOptions{})...)})
		require.NoError(t, err)
		require.NoError(t, wk.Start())
		t.Cleanup(wk.Stop)
		w.clients[ns], w.stores[ns] = c, st
	}
	return w
}

// run has namespace's worker read a big.txt of text with the read tool and
// returns the run's stubs, as its events hold them (not resolved).
func (w *runWorld) run(t *testing.T, namespace, workflowID, text string) []agent.BlobRef {
	t.Helper()
	workspace := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(workspace, "big.txt"), []byte(text), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := w.clients[namespace]
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflowID, TaskQueue: w.queue}, agentapi.AgentLoopWorkflow,
		agentapi.AgentLoopInput{
			LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "scripted", ID: "read-big"}, Tools: []string{"read"}, Workspace: workspace},
			Prompt:     "Read big.txt.",
		})
	require.NoError(t, err)
	var res agentapi.AgentLoopResult
	require.NoError(t, run.Get(ctx, &res))
	require.Equal(t, agent.StopReason("stop"), res.StopReason)
	var refs []agent.BlobRef
	for after := int64(0); ; {
		v, err := c.QueryWorkflow(ctx, workflowID, run.GetRunID(), agentapi.QueryEvents, agentapi.EventsQuery{After: after})
		require.NoError(t, err)
		var page agentapi.EventsPage
		require.NoError(t, v.Get(&page))
		for _, e := range page.Events {
			if e.Type == agent.EventToolExecutionEnd && e.Result != nil {
				for _, c := range e.Result.Content {
					if c.Blob != nil {
						refs = append(refs, *c.Blob)
					}
				}
			}
			after = e.Seq
		}
		if len(page.Events) == 0 || after >= page.Last {
			break
		}
	}
	require.NotEmpty(t, refs, "a %d-byte tool output travels as a stub", len(text))
	return refs
}

// bigText is a tool output far over the inline limit, different for each
// label.
func bigText(label string) string {
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "%s line %d: the quick brown fox jumps over the lazy dog\n", label, i)
	}
	return b.String()
}

// Runs in two namespaces, with the same workflow id and with others, store
// large tool outputs through real workers; the codec server serves each
// stub's content byte for byte to the run that stored it and to nobody
// else, from a directory and from S3, sealed with keys.
func TestBlobsOfRuns(t *testing.T) {
	keys := newKey(t)
	ring, err := codec.ParseKeys(keys)
	require.NoError(t, err)
	for _, backend := range []string{"dir", "s3"} {
		t.Run(backend, func(t *testing.T) {
			spec := t.TempDir()
			if backend == "s3" {
				srv := s3server.Start(t)
				srv.SetEnv(t)
				spec = srv.Spec
			}
			b, err := store.OpenBackend(spec)
			require.NoError(t, err)
			world := newRunWorld(t, b, ring)
			id := "blobs-" + backend + "-" + fmt.Sprint(time.Now().UnixNano())
			mine := world.run(t, "default", id, bigText("mine"))
			sibling := world.run(t, "default", id+"-sibling", bigText("sibling"))
			otherNS := world.run(t, otherNamespace, id, bigText("other namespace"))

			base, _ := startServer(t, []string{"-store", spec, "-namespace", "default," + otherNamespace},
				map[string]string{codec.EnvKeys: keys, codec.EnvToken: "tok"})
			for _, tc := range []struct {
				namespace string
				refs      []agent.BlobRef
				label     string
			}{{"default", mine, "mine"}, {"default", sibling, "sibling"}, {otherNamespace, otherNS, "other namespace"}} {
				for _, ref := range tc.refs {
					require.Equal(t, ref.Scope, map[bool]string{true: id + "-sibling", false: id}[tc.label == "sibling"])
					got := fetch(t, http.MethodGet, base, blobPath(tc.namespace, ref.Scope, ref.SHA256), "tok")
					require.Equal(t, http.StatusOK, got.status, string(got.body))
					want, err := world.stores[tc.namespace].Get(context.Background(), ref)
					require.NoError(t, err)
					require.Equal(t, want, got.body, "the bytes agentclient resolves the stub to")
					sum := sha256.Sum256(got.body)
					require.Equal(t, ref.SHA256, hex.EncodeToString(sum[:]))
					require.Len(t, got.body, ref.Size)
					var block agent.Content
					require.NoError(t, json.Unmarshal(got.body, &block))
					require.Equal(t, agent.ContentText, block.Type)
					require.Contains(t, block.Text, tc.label+" line 399:")
				}
			}
			refused := func(namespace, workflowID string, ref agent.BlobRef) {
				t.Helper()
				got := fetch(t, http.MethodGet, base, blobPath(namespace, workflowID, ref.SHA256), "tok")
				require.Equal(t, http.StatusNotFound, got.status, string(got.body))
				require.NotContains(t, string(got.body), "line")
			}
			refused("default", id+"-sibling", mine[0])      // another workflow's
			refused("default", id, sibling[0])              // and the other way
			refused(otherNamespace, id, mine[0])            // the same id in another namespace
			refused("default", id, otherNS[0])              // and the other way
			refused(otherNamespace, id+"-sibling", mine[0]) // both
			got := fetch(t, http.MethodGet, base, blobPath("default", id, mine[0].SHA256), "")
			require.Equal(t, http.StatusUnauthorized, got.status)
			got = fetch(t, http.MethodGet, base, blobPath("default", id, mine[0].SHA256[:40]), "tok")
			require.Equal(t, http.StatusBadRequest, got.status)
		})
	}
}

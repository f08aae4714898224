package historysecrets

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/protobuf/proto"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/internal/harness/logbuf"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/internal/logging"
	"github.com/durable-agents/agentloop/internal/secretenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// capturedLogger is the worker's zap logger (internal/logging) at debug
// level, writing JSON and console lines into a buffer.
func capturedLogger() (*logbuf.Buffer, *logging.Logger) {
	buf := &logbuf.Buffer{}
	cfg := zap.NewProductionEncoderConfig()
	core := zapcore.NewTee(
		zapcore.NewCore(zapcore.NewJSONEncoder(cfg), buf, zapcore.DebugLevel),
		zapcore.NewCore(zapcore.NewConsoleEncoder(cfg), buf, zapcore.DebugLevel),
	)
	l := logging.Wrap(zap.New(core))
	return buf, &l
}

// worker is a worker on its own queue of the shared test server whose
// client logs through a captured zap logger.
type testWorker struct {
	c     client.Client
	queue string
	logs  *logbuf.Buffer
}

func startWorker(t *testing.T, models *llm.Registry, ts ...tools.Tool) *testWorker {
	t.Helper()
	logs, logger := capturedLogger()
	c, err := client.NewClientFromExisting(testenv.Client(t), client.Options{Logger: *logger})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	w := &testWorker{c: c, queue: "leak-" + random(6), logs: logs}
	wk, err := agentworker.New(agentworker.Options{Client: c, Store: testenv.Store(t), TaskQueue: w.queue, Models: models,
		Tools: tools.NewRegistry(ts...), DefaultWorkspace: t.TempDir()})
	require.NoError(t, err)
	require.NoError(t, wk.Start())
	t.Cleanup(wk.Stop)
	return w
}

// everything is every place a run's data shows: the raw history (all
// payloads and failure messages, as protobuf and as JSON), the result or
// the run's error, the events and state Queries, and the worker's logs.
func (w *testWorker) everything(t *testing.T, in agentapi.AgentLoopInput) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := agentclient.Start(ctx, w.c, "leak-"+random(6), w.queue, in)
	require.NoError(t, err)
	var res agentapi.AgentLoopResult
	runErr := run.Get(ctx, &res)
	resJSON, _ := json.Marshal(res)

	var events, resolved bytes.Buffer
	require.NoError(t, agentclient.Follow(ctx, w.c, run.GetID(), run.GetRunID(), 0, func(e agent.Event) {
		b, _ := json.Marshal(e)
		events.Write(b)
		events.WriteByte('\n')
	}))
	// What the content store holds for the run reaches clients through
	// resolved events: large tool output lives there, not in history.
	require.NoError(t, agentclient.Watch(ctx, w.c, run.GetID(), run.GetRunID(), agentclient.WatchOptions{Store: testenv.Store(t)}, func(e agent.Event) {
		b, _ := json.Marshal(e)
		resolved.Write(b)
		resolved.WriteByte('\n')
	}))
	state, err := queryClosed(ctx, w.c, run.GetID(), run.GetRunID(), agentapi.QueryState)
	require.NoError(t, err)
	var st json.RawMessage
	require.NoError(t, state.Get(&st))

	hist, err := testenv.History(ctx, w.c, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	raw, err := proto.Marshal(hist)
	require.NoError(t, err)
	histJSON, err := temporalproto.CustomJSONMarshalOptions{}.Marshal(hist)
	require.NoError(t, err)
	require.Contains(t, w.logs.String(), "Started Worker", "the worker's logs are captured")
	return map[string]string{
		"history":        string(raw),
		"history JSON":   string(histJSON),
		"result":         string(resJSON) + fmt.Sprint(runErr),
		"events Query":   events.String(),
		"content store":  resolved.String(),
		"state Query":    string(st),
		"worker logs":    w.logs.String(),
		"decoded result": agent.TextOf(res.Messages[len(res.Messages)-1].Content) + res.Messages[len(res.Messages)-1].ErrorMessage,
	}
}

// requireNoSecret fails when any place holds the secret, any 12-character
// piece of its random part, or the secret in base64.
func requireNoSecret(t *testing.T, places map[string]string, secret, randomPart string) {
	t.Helper()
	needles := []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)), base64.RawURLEncoding.EncodeToString([]byte(secret))}
	for i := 0; i+12 <= len(randomPart); i += 6 {
		needles = append(needles, randomPart[i:i+12])
	}
	for where, text := range places {
		for _, n := range needles {
			if i := strings.Index(text, n); i >= 0 {
				t.Errorf("the planted secret (%q) shows in the %s: …%q…", n, where, text[max(0, i-80):min(len(text), i+len(n)+40)])
				break
			}
		}
	}
}

// providerCase is a real provider pointed at a local server that rejects
// the key, echoing it back as careless gateways do.
type providerCase struct {
	name, keyVar, baseVar, model, prefix, path string
	body                                       func(key string) string
}

var providerCases = []providerCase{
	{
		name: "anthropic", keyVar: "ANTHROPIC_API_KEY", baseVar: "ANTHROPIC_BASE_URL",
		model: "anthropic/claude-sonnet-4-5", prefix: "sk-ant-test-PLANTED-", path: "/v1/messages",
		body: func(key string) string {
			return `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key: ` + key + `"},"request_id":"req_leak"}`
		},
	},
	{
		name: "openai", keyVar: "OPENAI_API_KEY", baseVar: "OPENAI_BASE_URL",
		model: "openai/gpt-5", prefix: "sk-proj-test-PLANTED-", path: "/responses",
		body: func(key string) string {
			return `{"error": {"message": "Incorrect API key provided: ` + key + `. You can find your API key at https://platform.openai.com/account/api-keys.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}`
		},
	},
}

// A provider's API key planted in the worker's environment travels to the
// provider and nowhere else, even when the provider's 401 quotes it.
func TestProviderKeyNeverLeaks(t *testing.T) {
	for _, pc := range providerCases {
		t.Run(pc.name, func(t *testing.T) {
			randomPart := random(16)
			key := pc.prefix + randomPart
			var mu sync.Mutex
			var sawKey, calls int
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				calls++
				if r.Header.Get("x-api-key") == key || r.Header.Get("Authorization") == "Bearer "+key {
					sawKey++
				}
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("X-Echo-Key", key)
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = fmt.Fprint(w, pc.body(key))
			}))
			defer srv.Close()

			// The worker's environment, read as worker/main.go reads it.
			t.Setenv(pc.keyVar, key)
			base := srv.URL
			if pc.name == "openai" {
				base += "/v1"
			}
			t.Setenv(pc.baseVar, base)
			models := llm.NewRegistry()
			names := llm.RegisterFromEnv(models, os.Getenv)
			require.Contains(t, names, pc.name)

			w := startWorker(t, models)
			ref, err := agent.ParseModelRef(pc.model)
			require.NoError(t, err)
			places := w.everything(t, agentapi.AgentLoopInput{
				LoopConfig: agent.LoopConfig{Model: ref},
				Prompt:     "say hello",
			})
			mu.Lock()
			require.GreaterOrEqual(t, calls, 1, "the provider was called")
			require.Equal(t, calls, sawKey, "every call carried the planted key")
			mu.Unlock()
			require.Contains(t, places["decoded result"], "[redacted]", "the provider's error reached the run, scrubbed")
			require.Contains(t, places["events Query"], "[redacted]")
			requireNoSecret(t, places, key, randomPart)
		})
	}
}

// The commands a run's bash tool runs do not inherit the worker's secrets
// once the worker has read them (secretenv.Unset, as worker/main.go does
// after reading its configuration): a model asking for `env` learns
// nothing.
func TestToolsDoNotInheritWorkerSecrets(t *testing.T) {
	planted := map[string]string{}
	for _, name := range secretenv.Names {
		r := random(16)
		planted[name] = r
		t.Setenv(name, "PLANTED-"+r)
	}
	// Read the configuration as the worker does, then drop it from the
	// environment.
	models := llm.NewRegistry()
	require.Contains(t, llm.RegisterFromEnv(models, os.Getenv), "anthropic")
	removed := secretenv.Unset()
	require.ElementsMatch(t, secretenv.Names, removed)

	scripted := llm.NewScriptedProvider()
	scripted.Add("env", llm.Script{Responses: []llm.ScriptedResponse{
		{Content: []agent.Content{agent.ToolCall("c1", "bash", map[string]any{
			"command": `env; echo "anthropic=$ANTHROPIC_API_KEY codec=$AGENTLOOP_CODEC_KEYS"; cat /proc/$PPID/environ 2>/dev/null | tr '\0' '\n'`,
		})}},
		{Content: []agent.Content{agent.Text("done")}},
	}})
	models.Register("test", scripted)
	w := startWorker(t, models, tools.Builtins(tools.BuiltinOptions{})...)
	places := w.everything(t, agentapi.AgentLoopInput{
		LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: "env"}, Tools: []string{"bash"}},
		Prompt:     "print the environment",
	})
	for name, r := range planted {
		t.Run(name, func(t *testing.T) { requireNoSecret(t, places, "PLANTED-"+r, r) })
	}
	require.Contains(t, places["content store"], "anthropic= codec=", "bash ran and saw empty variables")
}

// queryClosed queries a closed run, which a worker must replay first: on
// a loaded machine the server can give up on the worker before it answers
// ("query timed out before a worker could process it"; seen under three
// packages' tests at once); that is asked again until ctx ends.
func queryClosed(ctx context.Context, c client.Client, id, runID, name string) (converter.EncodedValue, error) {
	for {
		v, err := c.QueryWorkflow(ctx, id, runID, name)
		if err == nil || !strings.Contains(err.Error(), "query timed out before a worker could process it") || ctx.Err() != nil {
			return v, err
		}
	}
}

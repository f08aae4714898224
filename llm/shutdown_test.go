package llm

import (
	"context"
	"testing"

	"github.com/durable-agents/agentloop/agent"
)

// workerShutdown is a worker shutdown's context cause, as the activities
// package makes it.
type workerShutdown struct{}

func (workerShutdown) Error() string        { return "worker shutting down" }
func (workerShutdown) WorkerShutdown() bool { return true }

// A call whose worker shuts down mid-stream is not the run's abort: every
// provider returns a retryable WorkerShutdown error instead of a message
// with stopReason aborted, and emits no aborted event (the call goes on on
// another worker). A plain cancellation stays an abort.
func TestWorkerShutdownIsNotAnAbort(t *testing.T) {
	models := map[string]func(*testing.T, *fakeProvider) Model{
		"anthropic": func(t *testing.T, f *fakeProvider) Model { return anthropicModelFor(t, f, "claude-haiku-4-5") },
		"openai-chat": func(t *testing.T, f *fakeProvider) Model {
			return openAIModelFor(t, f, openAIChatConfig, "gpt-4o")
		},
		"openai-responses": func(t *testing.T, f *fakeProvider) Model {
			cfg := openAIChatConfig
			cfg.API = APIOpenAIResponses
			return openAIModelFor(t, f, cfg, "gpt-5")
		},
	}
	fixtures := map[string]string{
		"anthropic":        "anthropic_no_stop.sse",
		"openai-chat":      "openai_chat_no_finish.sse",
		"openai-responses": "openai_responses_incomplete.sse",
	}
	for name, model := range models {
		t.Run(name, func(t *testing.T) {
			for _, shutdown := range []bool{true, false} {
				f := newFakeProvider(t, reply{Fixture: fixtures[name], Hold: true})
				ctx, cancel := context.WithCancelCause(context.Background())
				rec := &recorder{onEvent: func(ev agent.StreamEvent) {
					if ev.Type == agent.StreamTextDelta || ev.Type == agent.StreamStart {
						if shutdown {
							cancel(workerShutdown{})
						} else {
							cancel(nil)
						}
					}
				}}
				got, err := model(t, f).Stream(ctx, Request{Messages: []agent.Message{agent.UserText("x", 0)}}, rec.emit)
				cancel(nil)
				if !shutdown {
					if err != nil || got.StopReason != agent.StopReasonAborted {
						t.Fatalf("a plain cancellation is an abort: %+v, %v", got, err)
					}
					continue
				}
				e, ok := AsError(err)
				if !ok || e.Kind != ErrWorkerShutdown || !e.Kind.Retryable() {
					t.Fatalf("a shutdown is a retryable WorkerShutdown error, got %+v, %v", got, err)
				}
				for _, ev := range rec.events {
					if ev.Reason == string(agent.StopReasonAborted) {
						t.Errorf("a shutdown emitted an aborted event")
					}
				}
			}
		})
	}

	t.Run("scripted", func(t *testing.T) {
		p := NewScriptedProvider()
		p.Add("s", Script{Responses: []ScriptedResponse{{Content: []agent.Content{agent.Text("a long answer of many chunks")}}}})
		m, _ := p.Model("s")
		for _, shutdown := range []bool{true, false} {
			ctx, cancel := context.WithCancelCause(context.Background())
			rec := &recorder{onEvent: func(ev agent.StreamEvent) {
				if ev.Type == agent.StreamTextDelta {
					if shutdown {
						cancel(workerShutdown{})
					} else {
						cancel(nil)
					}
				}
			}}
			got, err := m.Stream(ctx, Request{}, rec.emit)
			cancel(nil)
			if shutdown {
				if e, ok := AsError(err); !ok || e.Kind != ErrWorkerShutdown {
					t.Fatalf("scripted: shutdown gave %+v, %v", got, err)
				}
				if rec.types() != "start text_start text_delta" {
					t.Errorf("scripted: events %q, want no aborted error event", rec.types())
				}
			} else if err != nil || got.StopReason != agent.StopReasonAborted {
				t.Fatalf("scripted: abort gave %+v, %v", got, err)
			}
		}
	})
}

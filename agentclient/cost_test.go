package agentclient_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/workflows"
)

// The cost guards of issue 16, counted from the dev server's own request
// metrics, so that a change cannot bring back a watcher that queries in a
// loop or a stream that heartbeats on every token.

// costRig is a dev server of the test's own (its metrics are the test's
// alone), a worker with a scripted model, and a content store.
type costRig struct {
	srv   *devserver.Server
	c     client.Client
	st    *store.Store
	queue string
}

// The scripted models: "fast" streams 500 chunks of 16 characters 10 ms
// apart (100 chunks a second for 5 s), "quick" answers at once.
const (
	fastChunks = 500
	fastDelay  = 10 * time.Millisecond
)

func newCostRig(t *testing.T) *costRig {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a dev server")
	}
	srv, err := devserver.Start(context.Background(), devserver.Options{Metrics: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	st, err := store.Open(t.TempDir(), store.Options{})
	require.NoError(t, err)
	r := &costRig{srv: srv, c: srv.Client(), st: st, queue: "cost-" + testenv.Suffix()}
	scripted := llm.NewScriptedProvider()
	scripted.Add("fast", llm.Script{ChunkDelay: fastDelay, Responses: []llm.ScriptedResponse{
		{Content: []agent.Content{agent.Text(strings.Repeat("streaming token ", fastChunks))}}}})
	var quick []llm.ScriptedResponse
	for range 10 {
		quick = append(quick, llm.ScriptedResponse{Content: []agent.Content{agent.Text("done")}})
	}
	scripted.Add("quick", llm.Script{Responses: quick})
	addAbortScripts(scripted)
	addWatchScripts(scripted)
	models := llm.NewRegistry()
	models.Register("test", scripted)
	bash := tools.NewBashTool(tools.BashOptions{OutputDir: t.TempDir()})
	wo := workflows.WorkerOptions()
	// Stop waits for the activities a test's end cancels (its runs are
	// terminated first): a model turn still writing its content into the
	// store made the store directory's removal fail ("directory not empty").
	wo.WorkerStopTimeout = 30 * time.Second
	w, err := agentworker.New(agentworker.Options{Client: r.c, Store: st, TaskQueue: r.queue, Models: models,
		Tools: tools.NewRegistry(bash, napTool), WorkerOptions: &wo})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return r
}

// requests reads the server's counts once they have settled: the server
// publishes its counters about once a second.
func (r *costRig) requests(t *testing.T) devserver.Requests {
	t.Helper()
	time.Sleep(1500 * time.Millisecond)
	req, err := r.srv.Requests(context.Background(), "default")
	require.NoError(t, err)
	return req
}

// watcherOps leaves out what workers ask whether or not anyone watches:
// their long polls for tasks.
func watcherOps(r devserver.Requests) devserver.Requests {
	out := devserver.Requests{}
	for op, n := range r {
		switch op {
		case "PollWorkflowTaskQueue", "PollActivityTaskQueue", "PollNexusTaskQueue", "RecordWorkerHeartbeat", "ShutdownWorker":
		default:
			out[op] = n
		}
	}
	return out
}

// A watcher of a session waiting for its next prompt makes at most 2
// requests in 10 s (it waits in a long poll of the history, 20 s each) and
// no Query.
func TestIdleWatchCostsAlmostNothing(t *testing.T) {
	r := newCostRig(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run, err := r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "idle-" + testenv.Suffix(), TaskQueue: r.queue},
		agentapi.SessionWorkflow, agentapi.SessionInput{LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: "quick"}}})
	require.NoError(t, err)
	defer func() { _ = r.c.TerminateWorkflow(context.Background(), run.GetID(), "", "test over") }()

	ended := make(chan struct{}, 4)
	watchErr := make(chan error, 1)
	go func() {
		o := agentclient.WatchOptions{Live: true, Store: r.st}
		watchErr <- agentclient.Watch(ctx, r.c, run.GetID(), "", o, func(e agent.Event) {
			if e.Type == agent.EventAgentEnd {
				ended <- struct{}{}
			}
		})
	}()
	var started agentapi.RunStatus
	require.NoError(t, agentclient.Update(ctx, r.c, run.GetID(), agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "hi"}, &started))
	select {
	case <-ended:
	case err := <-watchErr:
		t.Fatalf("watch ended: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the prompt's run did not end")
	}
	time.Sleep(time.Second) // the watcher's last read after agent_end
	before := r.requests(t)
	time.Sleep(10 * time.Second)
	used := watcherOps(r.requests(t).Sub(before))
	t.Logf("requests in 10 s of idle watching: %v", used)
	require.Zero(t, used["QueryWorkflow"], "an idle watcher queries nothing: %v", used)
	require.LessOrEqual(t, used.Sum(), 2.0, "an idle watcher waits in a long poll: %v", used)

	// It still sees the next prompt's events at once.
	require.NoError(t, agentclient.Update(ctx, r.c, run.GetID(), agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "again"}, &started))
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher did not see the second run end")
	}
}

// A model answering 100 chunks a second for 5 s costs at most 25
// heartbeats with a watcher (4 a second, each with only the new deltas),
// and at most 1 without one; the watcher gets every delta, in order.
func TestFastStreamHeartbeats(t *testing.T) {
	r := newCostRig(t)
	want := strings.Repeat("streaming token ", fastChunks)
	in := agentapi.AgentLoopInput{LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: "fast"}}, Prompt: "go"}
	for _, watched := range []bool{true, false} {
		name := map[bool]string{true: "watched", false: "unwatched"}[watched]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			before := r.requests(t)
			start := time.Now()
			run, err := r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: name + "-" + testenv.Suffix(), TaskQueue: r.queue},
				agentapi.AgentLoopWorkflow, in)
			require.NoError(t, err)
			var mu sync.Mutex
			var text strings.Builder
			var delays []time.Duration
			o := agentclient.WatchOptions{Live: watched, Store: r.st}
			err = agentclient.Watch(ctx, r.c, run.GetID(), run.GetRunID(), o, func(e agent.Event) {
				if e.Type != agent.EventMessageUpdate || e.AssistantMessageEvent.Type != agent.StreamTextDelta {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				text.WriteString(e.AssistantMessageEvent.Delta)
				if e.Time != 0 {
					delays = append(delays, time.Since(time.UnixMilli(e.Time)))
				}
			})
			require.NoError(t, err)
			streamed := time.Since(start) // at least as long as the model turn
			used := r.requests(t).Sub(before)
			beats := used["RecordActivityTaskHeartbeat"]
			t.Logf("%s: %v heartbeats; requests %v", name, beats, used)
			if !watched {
				require.LessOrEqual(t, beats, 1.0, "a stream nobody watches heartbeats for liveness only")
				return
			}
			// At most 4 a second for as long as the turn streamed: 5 s
			// idle, longer on a loaded machine, where 25 was once exceeded.
			require.LessOrEqual(t, beats, 4*streamed.Seconds()+1, "a watched stream heartbeats at most 4 times a second (streamed for %v)", streamed)
			// The watcher reads each heartbeat just after it is due (issue
			// 29), and every LivePollInterval only while none is due or one
			// is late, where it read every 50 ms all along before. So the
			// reads are at most one a heartbeat, plus the fast ones in the
			// time the heartbeats did not cover at their pace (none on an
			// idle machine; a loaded one delays heartbeats), plus a few at
			// the start and the end: 22 reads of a 5 s stream idle, where
			// the old pace made about 100.
			describes := used["DescribeWorkflowExecution"]
			t.Logf("%s: %v Describe reads in %v, %.1f a second", name, describes, streamed, describes/streamed.Seconds())
			onPace := time.Duration(beats) * agentapi.StreamInterval
			late := max(streamed-onPace, 0)
			bound := beats + float64(late/agentclient.LivePollInterval) + 8
			require.LessOrEqual(t, describes, bound, "a watched stream reads Describe at its heartbeats' pace (%v heartbeats in %v)", beats, streamed)
			// The deltas after the last heartbeat come with the result, not
			// in a heartbeat of their own: a quarter second's worth on an
			// idle machine (under 600 bytes), more where a loaded one
			// delays the last heartbeat, so the test checks the order and
			// that deltas arrived live, and logs how many did not.
			got := text.String()
			require.True(t, strings.HasPrefix(want, got), "the deltas the watcher saw are the answer's start, in order")
			require.NotEmpty(t, got, "the watcher saw deltas live")
			t.Logf("the watcher saw %d of %d bytes live", len(got), len(want))
			slices.Sort(delays)
			require.NotEmpty(t, delays)
			p99 := delays[len(delays)*99/100]
			t.Logf("%d deltas, delay p50 %v p99 %v max %v", len(delays), delays[len(delays)/2], p99, delays[len(delays)-1])
			// The budget is 300 ms p99, which `go run ./bench stream` checks
			// (here: 266-278 ms on an idle machine). What the code
			// guarantees is the pace: a heartbeat every agentapi.StreamInterval while
			// watched, against one every 10 s (liveness) while not. A loaded
			// machine stretches the first, so the guard sits between the
			// two: it catches a watched stream going at liveness pace.
			require.Less(t, p99, 5*time.Second, "deltas reach a watcher at the watched pace, not the liveness one")
		})
	}
}

// A watcher waiting in its long poll sees what a run records at once: the
// events of a prompt's run arrive soon after the prompt Update returns (the
// workflow task that completed the Update recorded them). Measured here,
// guarded loosely (a loaded CI machine); the README quotes the figures.
func TestWatcherSeesNewEventsSoon(t *testing.T) {
	r := newCostRig(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run, err := r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "latency-" + testenv.Suffix(), TaskQueue: r.queue},
		agentapi.SessionWorkflow, agentapi.SessionInput{LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: "quick"}}})
	require.NoError(t, err)
	defer func() { _ = r.c.TerminateWorkflow(context.Background(), run.GetID(), "", "test over") }()
	var mu sync.Mutex
	starts := map[int64]time.Time{}
	ended := make(chan struct{}, 16)
	go func() {
		_ = agentclient.Watch(ctx, r.c, run.GetID(), "", agentclient.WatchOptions{Store: r.st}, func(e agent.Event) {
			switch e.Type {
			case agent.EventAgentStart:
				mu.Lock()
				starts[e.Seq] = time.Now()
				mu.Unlock()
			case agent.EventAgentEnd:
				ended <- struct{}{}
			}
		})
	}()
	var delays, roundTrips []time.Duration
	for i := range 9 {
		time.Sleep(500 * time.Millisecond) // the watcher is back in its long poll
		var st agentapi.RunStatus
		sent := time.Now()
		require.NoError(t, agentclient.Update(ctx, r.c, run.GetID(), agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "hi"}, &st))
		returned := time.Now()
		roundTrips = append(roundTrips, returned.Sub(sent))
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Fatalf("prompt %d: the watcher saw no agent_end", i)
		}
		mu.Lock()
		seen, ok := starts[st.After+1]
		mu.Unlock()
		require.True(t, ok, "agent_start %d seen", st.After+1)
		delays = append(delays, max(seen.Sub(returned), 0))
	}
	slices.Sort(delays)
	slices.Sort(roundTrips)
	t.Logf("event seen after the Update returned: p50 %v, max %v (Update round trip p50 %v)",
		delays[len(delays)/2], delays[len(delays)-1], roundTrips[len(roundTrips)/2])
	// The median, not the maximum: one prompt delayed by a loaded machine
	// says nothing about the long poll, a watcher that polls on a timer
	// would be late every time. A loaded machine slows the watcher's poll
	// as much as the Update's round trip, so the guard grows with that.
	require.Less(t, delays[len(delays)/2], time.Second+roundTrips[len(roundTrips)/2])
}

package crashtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/crashtest"
	"github.com/durable-agents/agentloop/internal/harness/fleettest"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// A parent fanning out three sub-agents in one parallel batch loses its
// worker process (SIGKILL) while they run. Everything runs as in
// production: the real worker binary, the parent's workers on the test's
// queue, the children (and their tools) on a queue of their own served by
// another worker process, which the kill leaves running, and the models
// behind an OpenAI-compatible server. One child's bash call waits for
// approval, which the parent shows (waiting_approval, naming the child)
// before and after the kill and which is answered through the parent's
// approve Update; one child is steered with its own steer Update; the two
// that need no person finish while the parent has no worker. A new worker
// process replays the parent and gets each child's result once: one
// tool_execution_start and one tool_execution_end per call in pi's
// parallel order, three children started, the approved command run once.
//
// It runs twice: as is, and with the parent made to continue as new
// while its children run (continueAsNewAfterEvents), so that the kill
// and the new worker meet a paused batch carried into a later run, whose
// children's results come by signal. The assertions read the parent's
// whole chain of runs (events by workflow id, child starts over every run).
func TestSubAgentsSurviveTheirParentsWorkerKill(t *testing.T) {
	t.Run("one run", func(t *testing.T) { subAgentsSurviveAKill(t, 0) })
	t.Run("continued as new mid-batch", func(t *testing.T) { subAgentsSurviveAKill(t, 2) })
}

func subAgentsSurviveAKill(t *testing.T, continueAfterEvents int) {
	e := newEnv(t)
	m := newSubAgentModel(t)
	childQueue := e.queue + "-children"
	e.startRealWorker("children", childQueue, m)
	p1 := e.startRealWorker("parent-1", e.queue, m)

	id := "subagents"
	childModel := &agent.ModelRef{Provider: llm.OpenAICompatibleProviderName, ID: "child"}
	run := e.start(id, agentapi.AgentLoopInput{LoopConfig: agent.LoopConfig{
		Model:     agent.ModelRef{Provider: llm.OpenAICompatibleProviderName, ID: "parent"},
		Workspace: e.ws,
		// The children inherit these: their tools run on their own
		// worker, and bash waits for a person.
		ToolTaskQueue: childQueue,
		Approval:      &agent.ApprovalPolicy{Tools: []string{tools.BashToolName}},
		SubAgents: []agent.SubAgent{
			{Name: "approver", Description: "runs a command", TaskQueue: childQueue, Model: childModel, Tools: []string{tools.BashToolName}},
			{Name: "steered", Description: "lists", TaskQueue: childQueue, Model: childModel, Tools: []string{"ls"}},
			{Name: "plain", Description: "lists", TaskQueue: childQueue, Model: childModel, Tools: []string{"ls"}},
		},
	}, Prompt: "fan out", ContinueAsNewAfterEvents: continueAfterEvents})
	approver, steered, plain := id+"/task-1-1-t1", id+"/task-1-2-t2", id+"/task-1-3-t3"
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("model requests:\n%s", strings.Join(m.log(), "\n"))
			for _, wf := range []string{id, approver, steered, plain} {
				e.logHistory(wf)
			}
		}
	})

	e.parentWaitsFor(id, approver, "the parent waiting for its approver's bash call")
	e.waitFor("the steered and plain children in their first model turn", reachTimeout, func() bool { return m.heldTurns() == 2 })
	ctx := context.Background()
	require.NoError(t, agentclient.Update(ctx, e.c, steered, agentapi.UpdateSteer, agent.UserText(steerText, 0), nil))
	e.killRealWorker(p1, "while its three children run")
	m.release()
	for _, child := range []string{steered, plain} {
		e.waitFor(child+" completed while its parent has no worker", runTimeout, func() bool {
			d, err := e.c.DescribeWorkflow(ctx, child, "")
			return err == nil && d.RawResponse.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
		})
	}
	e.startRealWorker("parent-2", e.queue, m)
	e.parentWaitsFor(id, approver, "the new worker's parent still waiting for the approver")
	var left agentapi.ApprovalStatus
	require.NoError(t, agentclient.Update(ctx, e.c, id, agentapi.UpdateApprove,
		agentapi.ApproveRequest{ToolCallID: "c1", WorkflowID: approver, Decision: agent.ApprovalAllow}, &left))

	res := e.result(id, runTimeout)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Equal(t, "all answered", agent.TextOf(res.Messages[len(res.Messages)-1].Content))
	results := oneResultPerCall(t, res.Messages)
	require.Len(t, results, 3)
	require.Equal(t, "done: approver", agent.TextOf(results["t1"].Content))
	require.Equal(t, "done: steered, told: "+steerText, agent.TextOf(results["t2"].Content))
	require.Equal(t, "done: plain", agent.TextOf(results["t3"].Content))
	require.Len(t, lines(e.path(crashtest.Marker), "approved"), 1, "the approved command ran once")

	// pi's parallel batch: the starts in call order, each end once (the
	// approver's last: it waited for the person), then the result
	// messages in call order.
	var order []string
	approvals := 0
	// Watch from the first run follows the chain (e.events reads the
	// last run alone).
	for _, ev := range testenv.Events(t, e.c, run) {
		switch {
		case ev.Type == agent.EventToolExecutionStart, ev.Type == agent.EventToolExecutionEnd:
			order = append(order, string(ev.Type)+" "+ev.ToolCallID)
		case ev.Type == agent.EventMessageEnd && ev.Message.Role == agent.RoleToolResult:
			order = append(order, "result "+ev.Message.ToolCallID)
		case ev.Type == agent.EventApprovalRequest, ev.Type == agent.EventApprovalDecision:
			approvals++
			require.Equal(t, &agent.SubAgentRef{Agent: "approver", WorkflowID: approver}, ev.Approval.SubAgent)
		}
	}
	require.Len(t, order, 9, order)
	require.Equal(t, []string{"tool_execution_start t1", "tool_execution_start t2", "tool_execution_start t3"}, order[:3])
	require.ElementsMatch(t, []string{"tool_execution_end t2", "tool_execution_end t3"}, order[3:5])
	require.Equal(t, []string{"tool_execution_end t1", "result t1", "result t2", "result t3"}, order[5:])
	require.Equal(t, 2, approvals, "one approval_request and one approval_decision")

	started, completed := 0, 0
	for _, h := range e.chain(id) {
		for _, ev := range h.GetEvents() {
			switch ev.GetEventType() {
			case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED:
				started++
			case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
				completed++
			}
		}
	}
	require.Equal(t, 3, started, "no child started twice")
	if continueAfterEvents == 0 {
		require.Equal(t, 3, completed)
	} else {
		// The batch was paused and carried: the children that ended after
		// it sent their results by signal, not to the run that started
		// them.
		require.Greater(t, len(e.chain(id)), 1, "the parent continued as new")
		require.Less(t, completed, 3, "a child ended after the roll-over")
	}
	for _, child := range []string{approver, steered, plain} {
		d, err := e.c.DescribeWorkflow(ctx, child, "")
		require.NoError(t, err)
		require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, d.RawResponse.GetWorkflowExecutionInfo().GetStatus(), child)
	}
	if continueAfterEvents == 0 {
		e.saveHistory(id)
	}
}

const steerText = "also look at the docs"

// parentWaitsFor waits until the parent's state is waiting_approval with
// one pending approval, of the child's bash call, naming the child.
func (e *env) parentWaitsFor(id, child, what string) {
	e.t.Helper()
	e.waitFor(what, reachTimeout, func() bool {
		st, err := agentclient.State(context.Background(), e.c, id)
		return err == nil && st.Status == agentapi.StatusWaitingApproval && len(st.PendingApprovals) == 1 &&
			st.PendingApprovals[0].SubAgent != nil && st.PendingApprovals[0].SubAgent.WorkflowID == child &&
			st.PendingApprovals[0].SubAgent.Agent == "approver" && st.PendingApprovals[0].ToolName == tools.BashToolName
	})
}

// chain is the histories of every run of a workflow id, first to last.
func (e *env) chain(id string) []*historypb.History {
	e.t.Helper()
	var out []*historypb.History
	runID := ""
	for {
		h, err := testenv.History(context.Background(), e.c, id, runID)
		require.NoError(e.t, err)
		out = append([]*historypb.History{h}, out...)
		runID = h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if runID == "" {
			return out
		}
	}
}

// subAgentModel answers the parent and its three children by their
// prompts. The steered and plain children's first turns are held until
// release, so they are running when the parent's worker is killed.
type subAgentModel struct {
	*fleettest.Model
	mu       sync.Mutex
	held     int
	requests []string // what each request was, for a failing test's log
	released chan struct{}
	once     sync.Once
}

func newSubAgentModel(t *testing.T) *subAgentModel {
	m := &subAgentModel{released: make(chan struct{})}
	var err error
	m.Model, err = fleettest.StartModel(0, m.decide)
	require.NoError(t, err)
	t.Cleanup(func() {
		m.release()
		m.Close()
	})
	return m
}

func (m *subAgentModel) release() { m.once.Do(func() { close(m.released) }) }

func (m *subAgentModel) log() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string{}, m.requests...)
}

func (m *subAgentModel) heldTurns() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held
}

func (m *subAgentModel) decide(req *fleettest.Request) (fleettest.Answer, error) {
	prompt, turns := "", 0
	for _, msg := range req.Messages {
		switch {
		case msg.Role == "user" && prompt == "":
			prompt = msg.Text()
		case msg.Role == "assistant":
			turns++
		}
	}
	m.mu.Lock()
	m.requests = append(m.requests, fmt.Sprintf("%s: prompt %q, %d turns, last user %q", time.Now().Format("15:04:05.000"), prompt, turns, req.LastUser()))
	m.mu.Unlock()
	task := func(id, name string) fleettest.ToolCall {
		return fleettest.ToolCall{ID: id, Name: agent.SubAgentTool, Args: map[string]any{"agent": name, "prompt": name}}
	}
	switch {
	case prompt == "fan out" && turns == 0:
		return fleettest.Answer{Text: "Three helpers.", Calls: []fleettest.ToolCall{task("t1", "approver"), task("t2", "steered"), task("t3", "plain")}}, nil
	case prompt == "fan out":
		return fleettest.Answer{Text: "all answered"}, nil
	case prompt == "approver" && turns == 0:
		return fleettest.Answer{Calls: []fleettest.ToolCall{{ID: "c1", Name: tools.BashToolName,
			Args: map[string]any{"command": crashtest.BashApproved}}}}, nil
	case turns == 0:
		m.mu.Lock()
		m.held++
		m.mu.Unlock()
		<-m.released
		return fleettest.Answer{Calls: []fleettest.ToolCall{{ID: "c1", Name: "ls", Args: map[string]any{}}}}, nil
	case prompt == "steered":
		return fleettest.Answer{Text: "done: steered, told: " + req.LastUser()}, nil
	}
	return fleettest.Answer{Text: "done: " + prompt}, nil
}

var (
	realBinOnce sync.Once
	realBin     string
	realBinErr  error
)

// startRealWorker starts the real worker binary on queue, as host name,
// with the model server as its openai-compatible provider and the env's
// store and workspace, and waits until it polls queue for workflow tasks.
func (e *env) startRealWorker(name, queue string, m *subAgentModel) *fleettest.Host {
	e.t.Helper()
	realBinOnce.Do(func() { realBin, realBinErr = testenv.WorkerBin(filepath.Dir(workerBin)) })
	require.NoError(e.t, realBinErr)
	host := strings.SplitN(name, "-", 2)[0] // restarts keep the host's id and journal
	h := &fleettest.Host{ID: name, Bin: realBin, LogPath: filepath.Join(e.dir, "worker-"+name+".log"),
		Args: []string{"-address", e.hostPort, "-task-queue", queue, "-store", filepath.Join(e.dir, "content"),
			"-tool-journal", filepath.Join(e.dir, "journal-"+host), "-host-id", host, "-workspace", e.ws, "-sandbox", "none"},
		Env: append(envWithout("TEMPORAL_", "AGENTLOOP_", "OPENAI_"),
			"OPENAI_COMPATIBLE_BASE_URL="+m.URL, "OPENAI_COMPATIBLE_API=completions"),
	}
	require.NoError(e.t, h.Start())
	e.t.Cleanup(h.Kill)
	e.waitFor(fmt.Sprintf("worker %s (pid %d) polling %s", name, h.Pid(), queue), reachTimeout, func() bool {
		resp, err := e.c.DescribeTaskQueue(context.Background(), queue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err != nil {
			return false
		}
		for _, p := range resp.GetPollers() {
			if strings.HasPrefix(p.GetIdentity(), fmt.Sprintf("%d@", h.Pid())) {
				return true
			}
		}
		return false
	})
	return h
}

// killRealWorker kills a real worker process and logs it.
func (e *env) killRealWorker(h *fleettest.Host, why string) {
	e.t.Helper()
	pid := h.Pid()
	h.Kill()
	e.logf("SIGKILL worker %s (pid %d): %s", h.ID, pid, why)
}

// envWithout is this process's environment less the variables with the
// given prefixes.
func envWithout(prefixes ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		keep := true
		for _, p := range prefixes {
			keep = keep && !strings.HasPrefix(kv, p)
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

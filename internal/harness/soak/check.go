package soak

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentclient"
)

// Report is what a soak did and which invariants broke.
type Report struct {
	Options
	Dir string
	// Expected prompts (Sessions × Prompts), how many were answered, and
	// the workflow runs of all sessions (continue-as-new included).
	Expected, Answered, Runs int
	// Bash calls: run once and reported (Once), run once and reported as
	// failed to the model (RanReportedFailed), not run and reported
	// (NotRunReported).
	BashCalls, Once, RanReportedFailed, NotRunReported int
	// InterruptedTexts counts the texts the model got for failed bash
	// calls.
	InterruptedTexts map[string]int
	// Chaos: worker kills by signal, worker starts, server restarts, and
	// each thing the driver did.
	Kills          map[string]int
	WorkerStarts   int
	ServerRestarts int
	HostLosses     int
	Chaos          []string
	// From the histories: workflow task failures by cause, workflow task
	// timeouts, activity timeouts by activity type.
	TaskFailures     map[string]int
	TaskTimeouts     int
	ActivityTimeouts map[string]int
	// What the clients went through.
	WatchRestarts, UpdateRetries int
	Latency                      []time.Duration // per answered prompt, sorted
	ModelRequests                int64
	Wall, Setup                  time.Duration
	Violations                   []string
}

func (r *Report) violate(format string, args ...any) {
	r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
}

// check reads what the sessions recorded and checks the invariants.
func (s *soak) check(ctx context.Context, drivers []*sessionDriver) *Report {
	r := &Report{Options: s.o, Dir: s.dir, Expected: s.o.Sessions * s.o.Prompts, InterruptedTexts: map[string]int{},
		Kills: map[string]int{}, TaskFailures: map[string]int{}, ActivityTimeouts: map[string]int{}}
	s.mu.Lock()
	for sig, n := range s.kills {
		r.Kills[sig.String()] = n
	}
	r.ServerRestarts = s.servers
	r.HostLosses = s.losses
	for _, e := range s.events {
		r.Chaos = append(r.Chaos, fmt.Sprintf("%6.1fs %s", e.at.Seconds(), e.what))
	}
	s.mu.Unlock()
	r.WorkerStarts = s.fleet.starts()
	r.ModelRequests = s.model.Requests()
	for _, i := range s.fleet.exited() {
		r.violate("worker %d exited by itself; log %s", i, s.fleet.logPath(i))
	}
	for _, d := range drivers {
		s.checkSession(ctx, r, d)
	}
	slices.Sort(r.Latency)
	r.Wall, r.Setup = time.Since(s.began), s.setupTook
	for _, d := range drivers {
		_ = s.c.TerminateWorkflow(context.WithoutCancel(ctx), d.id, "", "soak over")
	}
	return r
}

func (s *soak) checkSession(ctx context.Context, r *Report, d *sessionDriver) {
	d.mu.Lock()
	events := slices.Clone(d.events)
	stopped := d.stopped
	r.Latency = append(r.Latency, d.latency...)
	r.WatchRestarts += d.watchRestarts
	r.UpdateRetries += d.updateRetries
	d.mu.Unlock()
	if stopped != "" {
		r.violate("session %s stuck: %s", d.id, stopped)
	}

	// The live log: 1, 2, 3, ... without a gap or a repeat.
	for i, ev := range events {
		if ev.Seq != int64(i+1) {
			r.violate("session %s: event %d of the live log has seq %d (%s): a gap or a duplicate", d.id, i+1, ev.Seq, ev.Type)
			break
		}
	}
	// The same log read again from the start, across continue-as-new.
	if again, err := s.readAgain(ctx, d.id, len(events)); err != nil {
		r.violate("session %s: reading the log again: %v", d.id, err)
	} else if diff := compareLogs(events, again); diff != "" {
		r.violate("session %s: the log read again differs from the live one: %s", d.id, diff)
	}

	ledger := readLedger(filepath.Join(d.ws, Ledger))
	for k := 1; k <= s.o.Prompts; k++ {
		prompts := count(events, func(ev agent.Event) bool {
			return ev.Type == agent.EventMessageEnd && ev.Message != nil && ev.Message.Role == agent.RoleUser && agent.TextOf(ev.Message.Content) == promptText(d.id, k)
		})
		answers := count(events, func(ev agent.Event) bool {
			return ev.Type == agent.EventMessageEnd && ev.Message != nil && ev.Message.Role == agent.RoleAssistant && agent.TextOf(ev.Message.Content) == answerText(d.id, k)
		})
		if prompts == 0 {
			continue // not sent: the driver's stop says why
		}
		if prompts > 1 {
			r.violate("session %s: prompt %d applied %d times", d.id, k, prompts)
		}
		if answers == 1 {
			r.Answered++
		} else if stopped == "" || answers > 1 {
			r.violate("session %s: prompt %d answered %d times: %s", d.id, k, answers, runOf(events, promptText(d.id, k)))
		}
		s.checkBash(r, d, k, events, ledger[fmt.Sprintf("%s %d", d.id, k)])
	}
	s.checkHistory(ctx, r, d.id)
}

// checkBash checks prompt k's bash call: run once, or reported to the
// model as failed; never run twice, never reported done without running.
func (s *soak) checkBash(r *Report, d *sessionDriver, k int, events []agent.Event, ran int) {
	id := bashCallID(d.id, k)
	var ends []agent.Event
	for _, ev := range events {
		if ev.Type == agent.EventToolExecutionEnd && ev.ToolCallID == id {
			ends = append(ends, ev)
		}
	}
	if len(ends) == 0 {
		if ran > 0 {
			r.violate("session %s: bash call %s ran %d time(s) and has no result", d.id, id, ran)
		}
		return
	}
	r.BashCalls++
	end := ends[0]
	text := ""
	if end.Result != nil {
		text = agent.TextOf(end.Result.Content)
	}
	if len(ends) > 1 {
		r.violate("session %s: bash call %s has %d results", d.id, id, len(ends))
	}
	switch {
	case ran > 1:
		r.violate("session %s: bash call %s ran %d times (event %d, isError=%v: %q)", d.id, id, ran, end.Seq, end.IsError, text)
	case ran == 1 && !end.IsError:
		r.Once++
	case ran == 1:
		r.RanReportedFailed++
		r.InterruptedTexts[text]++
	case end.IsError:
		r.NotRunReported++
		r.InterruptedTexts[text]++
	default:
		r.violate("session %s: bash call %s never ran but the model was told it succeeded (event %d: %q)", d.id, id, end.Seq, text)
	}
}

// runOf describes the run of a prompt: its events after the prompt up to
// agent_end, with what each assistant message said and why it stopped.
func runOf(events []agent.Event, prompt string) string {
	var b strings.Builder
	in := false
	for _, ev := range events {
		if !in {
			in = ev.Type == agent.EventMessageEnd && ev.Message != nil && ev.Message.Role == agent.RoleUser && agent.TextOf(ev.Message.Content) == prompt
			continue
		}
		switch {
		case ev.Type == agent.EventMessageEnd && ev.Message != nil && ev.Message.Role == agent.RoleAssistant:
			fmt.Fprintf(&b, "[%d assistant %q stop=%s %s] ", ev.Seq, agent.TextOf(ev.Message.Content), ev.Message.StopReason, ev.Message.ErrorMessage)
		case ev.Type == agent.EventToolExecutionEnd:
			text := ""
			if ev.Result != nil {
				text = agent.TextOf(ev.Result.Content)
			}
			fmt.Fprintf(&b, "[%d %s %s isError=%v %q] ", ev.Seq, ev.ToolName, ev.ToolCallID, ev.IsError, text)
		case ev.Type == agent.EventAgentEnd:
			fmt.Fprintf(&b, "[%d agent_end]", ev.Seq)
			return b.String()
		}
	}
	return b.String() + "(no agent_end)"
}

// readAgain reads a session's log from its first event with a new Watch,
// until it has n events.
func (s *soak) readAgain(ctx context.Context, id string, n int) ([]agent.Event, error) {
	if n == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var out []agent.Event
	err := agentclient.Watch(ctx, s.c, id, "", agentclient.WatchOptions{}, func(ev agent.Event) {
		out = append(out, ev)
		if len(out) >= n {
			cancel()
		}
	})
	if len(out) >= n {
		return out, nil
	}
	return out, fmt.Errorf("%d of %d events, then %v", len(out), n, err)
}

// compareLogs says where two reads of a log differ.
func compareLogs(a, b []agent.Event) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d events against %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Seq != b[i].Seq || a[i].Type != b[i].Type || a[i].ToolCallID != b[i].ToolCallID {
			return fmt.Sprintf("event %d: %d %s against %d %s", i+1, a[i].Seq, a[i].Type, b[i].Seq, b[i].Type)
		}
	}
	return ""
}

// checkHistory reads every run of a session: workflow task failures and
// timeouts, activity timeouts; the current run must be idle.
func (s *soak) checkHistory(ctx context.Context, r *Report, id string) {
	resp, err := s.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowId = '%s'", id)})
	if err != nil {
		r.violate("session %s: list runs: %v", id, err)
		return
	}
	r.Runs += len(resp.GetExecutions())
	for _, ex := range resp.GetExecutions() {
		runID := ex.GetExecution().GetRunId()
		scheduled := map[int64]string{}
		it := s.c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				r.violate("session %s run %s: history: %v", id, runID, err)
				break
			}
			switch {
			case ev.GetActivityTaskScheduledEventAttributes() != nil:
				scheduled[ev.GetEventId()] = ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
			case ev.GetWorkflowTaskFailedEventAttributes() != nil:
				a := ev.GetWorkflowTaskFailedEventAttributes()
				cause := strings.TrimPrefix(a.GetCause().String(), "WORKFLOW_TASK_FAILED_CAUSE_")
				r.TaskFailures[cause]++
				r.violate("session %s run %s: workflow task failed at event %d: %s: %s", id, runID, ev.GetEventId(), cause, a.GetFailure().GetMessage())
			case ev.GetWorkflowTaskTimedOutEventAttributes() != nil:
				r.TaskTimeouts++
			case ev.GetActivityTaskTimedOutEventAttributes() != nil:
				r.ActivityTimeouts[scheduled[ev.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId()]]++
			}
		}
	}
	d, err := s.c.DescribeWorkflow(ctx, id, "")
	if err != nil {
		r.violate("session %s: describe: %v", id, err)
		return
	}
	if n := len(d.RawResponse.GetPendingActivities()); n > 0 {
		r.violate("session %s: %d activities still pending at the end (%s)", id, n, d.RawResponse.GetPendingActivities()[0].GetActivityType().GetName())
	}
	if wt := d.RawResponse.GetPendingWorkflowTask(); wt != nil && wt.GetAttempt() > 1 {
		r.violate("session %s: a workflow task pending at the end, attempt %d", id, wt.GetAttempt())
	}
	if st, err := agentclient.State(ctx, s.c, id); err != nil {
		r.violate("session %s: state: %v", id, err)
	} else if st.Status != "idle" {
		r.violate("session %s: status %q at the end, not idle", id, st.Status)
	}
}

// readLedger counts a ledger's lines.
func readLedger(path string) map[string]int {
	out := map[string]int{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out[strings.TrimSpace(sc.Text())]++
	}
	return out
}

func count(events []agent.Event, f func(agent.Event) bool) int {
	n := 0
	for _, ev := range events {
		if f(ev) {
			n++
		}
	}
	return n
}

// Print writes the report.
func (r *Report) Print(w io.Writer) {
	p := func(name, format string, args ...any) {
		fmt.Fprintf(w, "%-26s %s\n", name, fmt.Sprintf(format, args...))
	}
	p("soak", "%d sessions x %d prompts on %d worker processes (%d without the provider's key), %v of chaos (worker killed every %v-%v), %d server restarts, %d hosts lost",
		r.Sessions, r.Prompts, r.processes(), r.DriftWorkers, r.Duration, r.KillMin, r.KillMax, r.ServerRestarts, r.HostLosses)
	p("prompts answered", "%d of %d", r.Answered, r.Expected)
	p("workflow runs", "%d (the sessions' chains, continue-as-new after %d turns)", r.Runs, r.ContinueAsNewAfterTurns)
	p("worker kills", "%d SIGKILL, %d SIGTERM; %d worker starts", r.Kills[syscall.SIGKILL.String()], r.Kills[syscall.SIGTERM.String()], r.WorkerStarts)
	p("server restarts", "%d", r.ServerRestarts)
	p("hosts lost for good", "%d (a new host id each; tools wait %v on a lost host's queue)", r.HostLosses, r.HostStartTimeout)
	p("bash calls", "%d: %d ran once, %d ran once and were reported failed, %d did not run and were reported", r.BashCalls, r.Once, r.RanReportedFailed, r.NotRunReported)
	texts := make([]string, 0, len(r.InterruptedTexts))
	for t, n := range r.InterruptedTexts {
		texts = append(texts, fmt.Sprintf("%dx %q", n, t))
	}
	slices.Sort(texts)
	for _, t := range texts {
		p("  what the model got", "%s", t)
	}
	p("workflow task failures", "%v", r.TaskFailures)
	p("workflow task timeouts", "%d", r.TaskTimeouts)
	p("activities timed out", "%v (for good: the attempts a retry followed leave no event)", r.ActivityTimeouts)
	p("client retries", "%d prompt Updates sent again, %d watches started again", r.UpdateRetries, r.WatchRestarts)
	if n := len(r.Latency); n > 0 {
		p("prompt latency", "p50 %v, p99 %v, max %v", r.Latency[n/2].Round(time.Millisecond), r.Latency[n*99/100].Round(time.Millisecond), r.Latency[n-1].Round(time.Millisecond))
	}
	p("model requests", "%d", r.ModelRequests)
	p("wall time", "%v after %v of set-up (stack, worker build, workers)", r.Wall.Round(time.Second), r.Setup.Round(100*time.Millisecond))
	p("kept in", "%s", r.Dir)
	p("violations", "%d", len(r.Violations))
	for i, v := range r.Violations {
		if i == 50 {
			fmt.Fprintf(w, "  ... and %d more\n", len(r.Violations)-50)
			break
		}
		fmt.Fprintf(w, "  %s\n", v)
	}
}

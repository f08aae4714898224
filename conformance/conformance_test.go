package conformance_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/conformance"
	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
)

var updateHistories = flag.Bool("update-histories", false, "record each scenario's history into testdata/histories for the replay tests")

func TestMain(m *testing.M) {
	conformance.BurnIfAsked()
	testenv.Main(m)
}

var (
	loadReps = flag.Int("load-reps", 1, "repetitions of the whole set in TestConformanceUnderLoad")
	loadBurn = flag.Int("load-burn", runtime.NumCPU(), "CPU burners running during TestConformanceUnderLoad")
)

// TestConformance plays every shared scenario through the workflow on a
// real server and requires pi's trace, event by event.
func TestConformance(t *testing.T) { runScenarios(t, "testdata") }

// TestConformanceExtra does the same for the project's own scenarios in the
// same format, whose traces pi produced with the reference runner.
func TestConformanceExtra(t *testing.T) { runScenarios(t, "testdata/extra") }

func runScenarios(t *testing.T, dir string) {
	c := testenv.Client(t)
	cases, err := conformance.Cases(dir)
	require.NoError(t, err)
	for _, cs := range cases {
		t.Run(cs.Name, func(t *testing.T) {
			if why, ok := conformance.KnownDifferences[cs.Name]; ok {
				t.Skip(why)
			}
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := conformance.Run(ctx, c, cs.Scenario)
			require.NoError(t, err)
			got, err := conformance.Canonical(res.Trace)
			require.NoError(t, err)
			require.Equal(t, cs.Want, got, "trace of %s (workflow %s)", cs.Name, res.WorkflowID)
			if *updateHistories && dir == "testdata" {
				path := filepath.Join("..", "testdata", "histories", cs.Name+".json")
				require.NoError(t, testenv.SaveHistory(ctx, c, res.WorkflowID, res.RunID, path))
			}
		})
	}
}

// TestConformanceUnderLoad is the CI-sized load run (the full one is
// conformance/cmd/loadrun): the whole set, shared, extra and typescript, -load-reps
// times, 8 runs in flight, while -load-burn processes keep cores busy.
// Every run must give pi's trace: the order of a parallel batch may not
// depend on which worker or signal reaches the workflow first. Without
// TEMPORAL_ADDRESS it has a dev server of its own, as loadrun does, so
// that its load stays off the other tests' server. Its burners would
// slow the timing of every other package's tests running beside it, so
// it runs alone: scripts/test runs it with AGENTLOOP_LOAD_CONFORMANCE=1
// after the other tests, once (142 runs; `go run ./conformance/cmd/loadrun
// -n 20` is the long run), which the test command's 15 minutes afford.
func TestConformanceUnderLoad(t *testing.T) {
	if testing.Short() || os.Getenv("AGENTLOOP_LOAD_CONFORMANCE") == "" {
		t.Skip("a load run that keeps the cores busy: AGENTLOOP_LOAD_CONFORMANCE=1 runs it")
	}
	var c client.Client
	if os.Getenv("TEMPORAL_ADDRESS") != "" {
		c = testenv.Client(t)
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		srv, err := devserver.Start(ctx, devserver.Options{DBFile: filepath.Join(t.TempDir(), "temporal.db")})
		require.NoError(t, err)
		defer func() { _ = srv.Stop() }()
		c = srv.Client()
	}
	var cases []conformance.Case
	// testdata/typescript's scenarios run here with the Go remote worker
	// (Run): their remote hooks under load; a Node.js worker per run would
	// load the machine past what the runs are measured under.
	for _, dir := range []string{"testdata", "testdata/extra", "testdata/typescript"} {
		cs, err := conformance.Cases(dir)
		require.NoError(t, err)
		cases = append(cases, cs...)
	}
	// A batch of 200 calls among 7 other runs in flight under the burners
	// waited over a minute for its last activity (3 of 3 failing runs at
	// load 8-9): past the longest eventOrderWindow there is, pi's order is
	// not promised (docs/parallel-order.md). So the wide batches run after
	// the others, one at a time, under the same burners.
	var wide []conformance.Case
	cases = slices.DeleteFunc(cases, func(cs conformance.Case) bool {
		if len(toolCalls(cs.Scenario)) > 50 {
			wide = append(wide, cs)
			return true
		}
		return false
	})
	stop, err := conformance.StartBurners(*loadBurn)
	require.NoError(t, err)
	defer stop()
	runs := 0
	report := func(o conformance.Outcome) {
		runs++
		if o.Retries > 0 {
			// A run the server failed is run again after 15 s, then 30 s:
			// say so, since it is what makes a load run slow.
			t.Logf("%s, repetition %d: run again %d time(s) after the server failed it: %v", o.Case, o.Repetition, o.Retries, o.RetriedFor)
		}
		switch {
		case o.Err != nil:
			t.Errorf("%s, repetition %d: %v", o.Case, o.Repetition, o.Err)
		case o.Diff != "":
			t.Errorf("%s, repetition %d (workflow %s, %s; %s): %s", o.Case, o.Repetition, o.WorkflowID,
				o.Took.Round(time.Millisecond), activityTimes(c, o.WorkflowID), o.Diff)
		}
	}
	conformance.RunRepeated(context.Background(), c, cases, *loadReps, 8, report)
	conformance.RunRepeated(context.Background(), c, wide, *loadReps, 1, report)
	t.Logf("%d runs (%d of batches over 50 calls, one at a time), %d burners on %d cores", runs, len(wide)**loadReps, *loadBurn, runtime.NumCPU())
}

// TestTestdataMatchesShared keeps the copied scenarios and traces identical
// to the shared ones, when the shared directory is beside the checkout.
func TestTestdataMatchesShared(t *testing.T) {
	shared := filepath.Join("..", "..", "shared", "conformance")
	if _, err := os.Stat(shared); err != nil {
		t.Skip("no shared conformance directory beside the checkout")
	}
	for _, dir := range []string{"scenarios", "traces"} {
		theirs, err := filepath.Glob(filepath.Join(shared, dir, "*"))
		require.NoError(t, err)
		ours, err := filepath.Glob(filepath.Join("testdata", dir, "*"))
		require.NoError(t, err)
		require.Equal(t, len(theirs), len(ours), dir)
		for _, f := range theirs {
			a, err := os.ReadFile(f)
			require.NoError(t, err)
			b, err := os.ReadFile(filepath.Join("testdata", dir, filepath.Base(f)))
			require.NoError(t, err)
			require.Equal(t, string(a), string(b), f)
		}
	}
}

// activityTimes sums up a run's activities from its history, for a run
// that differed under load: how many, the slowest from scheduled to
// closed, how many ran more than one attempt, and how many timed out or
// failed for good (a parallel batch whose call closes more than the 1 m
// eventOrderWindow after the batch began may end out of pi's order;
// docs/parallel-order.md).
func activityTimes(c client.Client, workflowID string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled := map[int64]time.Time{}
	var n, retried, timedOut, failed int
	var slowest time.Duration
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return "history: " + err.Error()
		}
		at := e.GetEventTime().AsTime()
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			scheduled[e.GetEventId()] = at
			n++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			if e.GetActivityTaskStartedEventAttributes().GetAttempt() > 1 {
				retried++
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			slowest = max(slowest, at.Sub(scheduled[e.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()]))
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
			timedOut++
			slowest = max(slowest, at.Sub(scheduled[e.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId()]))
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			failed++
		}
	}
	return fmt.Sprintf("%d activities, slowest %s from scheduled to closed, %d retried, %d timed out, %d failed",
		n, slowest.Round(time.Millisecond), retried, timedOut, failed)
}

// toolCalls lists the tool calls a scenario's model makes, in all its
// answers.
func toolCalls(s conformance.Scenario) []string {
	var ids []string
	for _, a := range s.Model {
		for _, b := range a.Content {
			if b.Type == agent.ContentToolCall {
				ids = append(ids, b.ID)
			}
		}
	}
	return ids
}

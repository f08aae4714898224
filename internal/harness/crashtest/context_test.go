package crashtest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/harness/crashtest"
)

// A run's context lives in the content store (twenty 48 KB tool outputs).
// Its worker is killed while a model turn streams; the next worker, with a
// cold cache, reads the context back from the store, slowly, and is killed
// in the middle of that read; a third worker reads it again and finishes.
// The turn the model finally answers was sent the whole context (its answer
// is a digest of the outputs it got), and every output appears once.
func TestKillWorkerWhileModelTurnReadsContext(t *testing.T) {
	e := newEnv(t)
	w1 := e.startWorker("w1")
	id := "context"
	e.start(id, e.input(crashtest.ModelContext, crashtest.BigOutputTool))
	e.waitFor("turn 2 streaming", reachTimeout, func() bool {
		_, _, hb := e.pendingActivity(id, modelActivity)
		return hb != nil && hb.Turn == 2 && hb.Seq >= 5
	})
	e.killWorker(w1, "mid-stream")

	// The retried turn goes to a worker that has never seen the run.
	w2 := e.startWorker("w2", "-store-read-delay", "400ms")
	reads := filepath.Join(e.dir, crashtest.ReadsLog)
	var w2Reads int
	e.waitFor("w2 reading the context from the store", 90*time.Second, func() bool {
		b, _ := os.ReadFile(reads)
		w2Reads = strings.Count(string(b), "pid="+itoa(w2.pid())+" ")
		return w2Reads >= 2
	})
	e.killWorker(w2, "while it reads the context back")
	e.startWorker("w3")

	res := e.result(id, 3*runTimeout)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	var outputs []string
	for _, callID := range crashtest.BigOutputCalls() {
		outputs = append(outputs, crashtest.BigOutput(callID))
	}
	var answers []string
	for _, m := range assistantMessages(res.Messages) {
		answers = append(answers, agent.TextOf(m.Content))
	}
	require.Len(t, answers, 2, "one assistant message per turn, none from the lost attempts")
	require.True(t, strings.HasPrefix(answers[1], crashtest.ContextDigest(outputs)+" "),
		"the answering worker sent the whole context: %.120s", answers[1])

	turns := ofType(e.logActivities(id), modelActivity)
	require.Len(t, turns, 2)
	require.GreaterOrEqual(t, turns[1].Attempt, int32(3), "turn 2 ran on w1, w2 and w3")
	evs := e.events(id)
	for _, callID := range crashtest.BigOutputCalls() {
		require.Equal(t, 1, countEvents(evs, agent.EventToolExecutionEnd, callID), "each output once")
	}
	e.logf("w2 made %d reads before it was killed", w2Reads)
}

// A worker killed while the summarizer of a compaction writes: after the
// activity's heartbeat timeout a new worker compacts again from the same
// context, the summary is recorded once, and the run goes on from the
// compacted context to its end.
func TestKillWorkerDuringCompaction(t *testing.T) {
	e := newEnv(t)
	w1 := e.startWorker("w1")
	id := "compact"
	in := e.input(crashtest.ModelCompact, crashtest.BigOutputTool)
	// Two 12,000-token outputs pass 20,000 - 4,096: the third turn compacts.
	// Keeping 13,000 tokens cuts before the second call, so the first call
	// and its output are the turn prefix to summarize (with less than one
	// output kept, pi finds no cut point and nothing would be summarized).
	in.Compaction = &agent.CompactionConfig{ContextWindow: 20000, ReserveTokens: 4096, KeepRecentTokens: 13000}
	e.start(id, in)
	log := filepath.Join(e.dir, crashtest.SummariesLog)
	e.waitFor("the summarizer writing on w1", reachTimeout, func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "pid="+itoa(w1.pid()))
	})
	time.Sleep(time.Second) // well into the summary's 4 s
	e.killWorker(w1, "while the summarizer writes")
	e.startWorker("w2")

	res := e.result(id, runTimeout)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Equal(t, 3, res.Turns)
	require.Equal(t, "done", agent.TextOf(res.Messages[len(res.Messages)-1].Content))

	evs := e.events(id)
	var ends []agent.CompactionInfo
	for _, ev := range evs {
		if ev.Type == agent.EventCompactionEnd {
			ends = append(ends, *ev.Compaction)
		}
	}
	require.Len(t, ends, 1, "one compaction, recorded once")
	require.NotNil(t, ends[0].Result)
	require.Equal(t, agent.CompactionThreshold, ends[0].Reason)
	compacts := ofType(e.logActivities(id), "CompactContext")
	require.Len(t, compacts, 1)
	require.GreaterOrEqual(t, compacts[0].Attempt, int32(2), "the compaction ran again on w2")
	b, _ := os.ReadFile(log)
	require.GreaterOrEqual(t, strings.Count(string(b), "summarizing"), 2, "w2 asked for the summary again")
}

package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/store"
)

// mb is the unit of the content benchmark's budgets: Temporal's own limits
// (4 MB suggests continue-as-new, 50 MB ends a run) count 2^20 bytes.
const mb = 1 << 20

// runStat is one run of a workflow id's continue-as-new chain, with the
// server's figures for its history.
type runStat struct {
	runID   string
	status  enumspb.WorkflowExecutionStatus
	bytes   int64
	events  int64
	failed  int    // WorkflowTaskFailed events
	timeout int    // WorkflowTaskTimedOut events
	failure string // the first failure's cause and message
}

// chainStat is every run of a workflow id.
type chainStat struct {
	runs             []runStat // first run first
	bytes, events    int64
	largest          runStat
	failed, timedOut int
	failure          string // the first workflow task failure, with its run
}

// measureChain walks a workflow id's chain from its latest run back to the
// first (each run's first event names the run it continues), reads every
// run's history for workflow task failures, and takes each run's size from
// the server: visibility (ListWorkflow) for closed runs, and
// DescribeWorkflowExecution for the open one.
func measureChain(ctx context.Context, c client.Client, id string) (chainStat, error) {
	desc, err := c.DescribeWorkflow(ctx, id, "")
	if err != nil {
		return chainStat{}, err
	}
	var runs []runStat
	for runID := desc.RawResponse.GetWorkflowExecutionInfo().GetExecution().GetRunId(); runID != ""; {
		evs, err := history(ctx, c, id, runID)
		if err != nil {
			return chainStat{}, fmt.Errorf("history of %s run %s: %w", id, runID, err)
		}
		r := runStat{runID: runID}
		for _, ev := range evs {
			if a := ev.GetWorkflowTaskFailedEventAttributes(); a != nil {
				r.failed++
				if r.failure == "" {
					r.failure = fmt.Sprintf("event %d WorkflowTaskFailed, cause %s: %s", ev.GetEventId(), a.GetCause(), a.GetFailure().GetMessage())
				}
			}
			if ev.GetWorkflowTaskTimedOutEventAttributes() != nil {
				r.timeout++
			}
		}
		runs = append(runs, r)
		runID = ""
		if len(evs) > 0 {
			runID = evs[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		}
	}
	for i, j := 0, len(runs)-1; i < j; i, j = i+1, j-1 {
		runs[i], runs[j] = runs[j], runs[i]
	}
	sizes, err := visibilitySizes(ctx, c, id, len(runs))
	if err != nil {
		return chainStat{}, err
	}
	var ch chainStat
	for i := range runs {
		r := &runs[i]
		v, ok := sizes[r.runID]
		if !ok {
			return chainStat{}, fmt.Errorf("visibility does not list run %s of %s", r.runID, id)
		}
		r.status = v.GetStatus()
		r.bytes, r.events = v.GetHistorySizeBytes(), v.GetHistoryLength()
		if r.status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			d, err := c.DescribeWorkflow(ctx, id, r.runID)
			if err != nil {
				return chainStat{}, err
			}
			r.bytes, r.events = d.RawResponse.GetWorkflowExecutionInfo().GetHistorySizeBytes(), d.RawResponse.GetWorkflowExecutionInfo().GetHistoryLength()
		}
		ch.bytes += r.bytes
		ch.events += r.events
		if r.bytes > ch.largest.bytes {
			ch.largest = *r
		}
		ch.failed += r.failed
		ch.timedOut += r.timeout
		if ch.failure == "" && r.failure != "" {
			ch.failure = fmt.Sprintf("workflow %s run %s: %s", id, r.runID, r.failure)
		}
	}
	ch.runs = runs
	return ch, nil
}

// visibilitySizes lists the runs of a workflow id, waiting until
// visibility has every closed run with its size (it lags behind a close).
func visibilitySizes(ctx context.Context, c client.Client, id string, want int) (map[string]*workflowpb.WorkflowExecutionInfo, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		out := map[string]*workflowpb.WorkflowExecutionInfo{}
		complete := true
		var token []byte
		for {
			resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
				Query: fmt.Sprintf("WorkflowId = '%s'", id), NextPageToken: token,
			})
			if err != nil {
				return nil, err
			}
			for _, e := range resp.GetExecutions() {
				out[e.GetExecution().GetRunId()] = e
				if e.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING && e.GetHistorySizeBytes() == 0 {
					complete = false
				}
			}
			if token = resp.GetNextPageToken(); len(token) == 0 {
				break
			}
		}
		if complete && len(out) >= want {
			return out, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("visibility lists %d of the %d runs of %s after a minute", len(out), want, id)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// scopeStat is what the content store holds for one workflow id.
type scopeStat struct {
	objects int
	bytes   int64 // on disk
	// copies counts, for each distinct tool output (a run of at least
	// contentOutput base64 characters), the objects holding it.
	copies map[[32]byte]int
	// outputObjects are objects that hold exactly one output and nothing
	// else of size: the stubs design's one blob per output.
	outputObjects int
}

func (s scopeStat) maxCopies() int {
	n := 0
	for _, c := range s.copies {
		n = max(n, c)
	}
	return n
}

// measureScope reads every blob stored under a workflow id. Blobs are
// decoded as store/format.go lays them out: the 4-byte magic, a flags byte,
// then gzip (the benchmark does not encrypt).
func measureScope(storeDir, id string) (scopeStat, error) {
	dir := filepath.Join(storeDir, store.KeyPrefix("", id))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return scopeStat{}, err
	}
	s := scopeStat{copies: map[[32]byte]int{}}
	for _, ent := range entries {
		if ent.IsDir() || len(ent.Name()) != 64 {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, ent.Name()))
		if err != nil {
			return s, err
		}
		s.objects++
		s.bytes += int64(len(raw))
		plain, err := blobPlaintext(raw)
		if err != nil {
			return s, fmt.Errorf("%s: %w", ent.Name(), err)
		}
		outs := base64Runs(plain, contentOutput)
		for _, o := range outs {
			s.copies[sha256.Sum256(o)]++
		}
		if len(outs) == 1 && len(plain) < contentOutput+256 {
			s.outputObjects++
		}
	}
	return s, nil
}

func blobPlaintext(raw []byte) ([]byte, error) {
	if len(raw) < 5 || !bytes.Equal(raw[:4], []byte{'a', 'l', 'b', 1}) {
		return nil, fmt.Errorf("not a content store blob")
	}
	if raw[4] != 1 {
		return nil, fmt.Errorf("blob flags %d: sealed blobs cannot be measured", raw[4])
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw[5:]))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// base64Runs returns the runs of at least n base64 characters in b: the
// outputs of contentCommand, wherever they are (a content block's JSON, a
// Temporal payload, a transcript segment).
func base64Runs(b []byte, n int) [][]byte {
	var out [][]byte
	start := -1
	for i := 0; i <= len(b); i++ {
		if i < len(b) && isBase64(b[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= n {
			out = append(out, b[start:i])
		}
		start = -1
	}
	return out
}

func isBase64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/'
}

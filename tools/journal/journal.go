package journal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/tools"
)

// LookupActivity is the activity type name of Journal.LookupToolOutcome.
const LookupActivity = "LookupToolOutcome"

// Journal states of one key.
const (
	// StateUnknown: this host has no record of the key. The call never
	// started here, or started on another host.
	StateUnknown = "unknown"
	// StateStarted: the tool began on this host and no outcome was
	// recorded: it may have had effects, so it must not be re-run.
	StateStarted = "started"
	// StateCompleted: the tool finished and its outcome is recorded.
	StateCompleted = "completed"
	// StateInterrupted: the tool began on this host and was stopped before
	// it finished because its worker shut down; it may have had some of
	// its effects and must not be re-run.
	StateInterrupted = "interrupted"
)

// Journal is a directory of outcome records, one file per idempotency key.
// Records are written atomically (temporary file, fsync, rename, fsync of
// the directory), so a record read back is whole.
type Journal struct {
	Dir string
}

// Record is what the journal holds for one key.
type Record struct {
	Key       string           `json:"key"`
	State     string           `json:"state"`
	Host      string           `json:"host"`
	PID       int              `json:"pid"`
	Started   time.Time        `json:"started"`
	Completed time.Time        `json:"completed,omitzero"`
	Result    agent.ToolResult `json:"result"`
	IsError   bool             `json:"isError,omitempty"`
	// ErrorText is the message of an error the tool returned; the
	// activity turns it into an error result with this text.
	ErrorText string `json:"errorText,omitempty"`
}

// Open creates the directory if needed.
func Open(dir string) (*Journal, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &Journal{Dir: dir}, nil
}

func (j *Journal) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(j.Dir, hex.EncodeToString(sum[:])+".json")
}

// Load returns the record of key, if any.
func (j *Journal) Load(key string) (Record, bool, error) {
	b, err := os.ReadFile(j.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, false, fmt.Errorf("journal record %s: %w", j.path(key), err)
	}
	return r, true, nil
}

// Records returns every record in the journal.
func (j *Journal) Records() ([]Record, error) {
	entries, err := os.ReadDir(j.Dir)
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".json" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(j.Dir, e.Name()))
		if err != nil {
			return nil, err
		}
		var r Record
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Store writes a record atomically and durably.
func (j *Journal) Store(r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	final := j.path(r.Key)
	f, err := os.CreateTemp(j.Dir, ".record-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	d, err := os.Open(j.Dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Prune removes records last written (started, or completed) before
// cutoff.
func (j *Journal) Prune(cutoff time.Time) error {
	_, err := j.prune(cutoff, 0, 0)
	return err
}

// Limits bound the journal. A record must outlive the longest a workflow
// may take to ask for it: the tool's heartbeat timeout (30 s by default)
// plus the lookup's schedule-to-start timeout (1 minute), so the age bound
// is hours or days and MinAge protects what a lookup may still need.
type Limits struct {
	// MaxAge removes records whose last write is older; 0 keeps them.
	MaxAge time.Duration
	// MaxBytes removes the oldest records until the journal's files take
	// at most this many bytes; 0 means no bound.
	MaxBytes int64
	// MinAge keeps records younger than this whatever the bounds say
	// (the worker uses DefaultMinAge); 0 means no minimum.
	MinAge time.Duration
}

// DefaultMinAge is how long a record is kept whatever the size bound: well
// past the longest a lost attempt's lookup can come (heartbeat timeout plus
// the lookup's schedule-to-start timeout, under two minutes by default).
const DefaultMinAge = 10 * time.Minute

// PruneStats says what a prune did.
type PruneStats struct {
	Removed, Kept int
	KeptBytes     int64
}

// PruneTo removes records older than MaxAge, then the oldest records until
// the journal holds at most MaxBytes, never one younger than MinAge. A
// worker runs it at start-up and then periodically (worker flags
// -tool-journal-max-age, -tool-journal-max-bytes).
func (j *Journal) PruneTo(l Limits) (PruneStats, error) {
	var cutoff time.Time
	if l.MaxAge > 0 {
		cutoff = time.Now().Add(-l.MaxAge)
	}
	return j.prune(cutoff, l.MaxBytes, l.MinAge)
}

// prune removes records last written before cutoff (none when zero), then
// the oldest until at most maxBytes remain (no bound when 0), keeping
// those younger than minAge.
func (j *Journal) prune(cutoff time.Time, maxBytes int64, minAge time.Duration) (PruneStats, error) {
	type file struct {
		path string
		size int64
		mod  time.Time
	}
	entries, err := os.ReadDir(j.Dir)
	if err != nil {
		return PruneStats{}, err
	}
	var files []file
	var total int64
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".json" {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		files = append(files, file{filepath.Join(j.Dir, e.Name()), info.Size(), info.ModTime()})
		total += info.Size()
	}
	// Oldest first; a record's file is rewritten when it completes, so
	// its modification time is its last write.
	slices.SortFunc(files, func(a, b file) int { return a.mod.Compare(b.mod) })
	now := time.Now()
	var st PruneStats
	for _, f := range files {
		tooOld := !cutoff.IsZero() && f.mod.Before(cutoff)
		tooBig := maxBytes > 0 && total > maxBytes
		if (tooOld || tooBig) && now.Sub(f.mod) >= minAge {
			if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return st, err
			}
			total -= f.size
			st.Removed++
			continue
		}
		st.Kept++
		st.KeptBytes += f.size
	}
	return st, nil
}

// LookupInput asks what became of one tool execution.
type LookupInput struct {
	Key string `json:"key"`
}

// Outcome is the answer: the state on the host that answered and, when
// completed, the recorded result.
type Outcome struct {
	State   string           `json:"state"`
	Host    string           `json:"host"`
	Result  agent.ToolResult `json:"result"`
	IsError bool             `json:"isError,omitempty"`
}

// LookupToolOutcome is the activity the workflow runs on the tool's task
// queue after the tool's attempt was lost. Register it with the name
// LookupActivity.
func (j *Journal) LookupToolOutcome(ctx context.Context, in LookupInput) (Outcome, error) {
	host, _ := os.Hostname()
	r, ok, err := j.Load(in.Key)
	if err != nil {
		return Outcome{}, err
	}
	if !ok {
		return Outcome{State: StateUnknown, Host: host}, nil
	}
	out := Outcome{State: r.State, Host: host}
	if r.State == StateCompleted {
		out.Result, out.IsError = r.Result, r.IsError
		if r.ErrorText != "" {
			out.Result = agent.ErrorResult(r.ErrorText)
		}
	}
	return out, nil
}

// Journaled is a tool whose executions are journaled under the call's
// idempotency key: a "started" record before the tool runs, a "completed"
// record with the outcome after it, both on disk before Execute returns and
// so before ExecuteToolCall reports the result. An execution whose key is
// already completed returns the recorded outcome without running the tool.
type Journaled struct {
	tools.Tool
	Journal *Journal
	// PauseAfterRecord makes Execute wait after recording the outcome, so
	// a test can kill the worker between the record and the report.
	PauseAfterRecord time.Duration
}

// Execute implements tools.Tool.
func (t *Journaled) Execute(ctx context.Context, call tools.Call) (agent.ToolResult, error) {
	if call.IdempotencyKey == "" {
		return t.Tool.Execute(ctx, call)
	}
	if r, ok, err := t.Journal.Load(call.IdempotencyKey); err != nil {
		return agent.ToolResult{}, tools.Fault(err)
	} else if ok && r.State == StateCompleted {
		if r.ErrorText != "" {
			return agent.ToolResult{}, errors.New(r.ErrorText)
		}
		return r.Result, nil
	}
	host, _ := os.Hostname()
	rec := Record{Key: call.IdempotencyKey, State: StateStarted, Host: host, PID: os.Getpid(), Started: time.Now()}
	if err := t.Journal.Store(rec); err != nil {
		// Nothing ran yet: a fault, which Temporal may retry.
		return agent.ToolResult{}, tools.Fault(fmt.Errorf("journal: %w", err))
	}
	result, err := t.Tool.Execute(ctx, call)
	if tools.IsInterrupted(err) || (err != nil && tools.ShuttingDown(ctx)) {
		rec.State, rec.Completed = StateInterrupted, time.Now()
		_ = t.Journal.Store(rec) // best effort: a lookup finds "started" otherwise, which means the same
		if !tools.IsInterrupted(err) {
			err = tools.Interrupted(context.Cause(ctx))
		}
		return agent.ToolResult{}, err
	}
	if tools.IsFault(err) {
		return result, err
	}
	rec.State, rec.Completed = StateCompleted, time.Now()
	if err != nil {
		rec.IsError, rec.ErrorText = true, err.Error()
	} else {
		rec.Result = result
	}
	if jerr := t.Journal.Store(rec); jerr != nil {
		// The outcome is still reported; only its recovery is lost.
		return result, err
	}
	if t.PauseAfterRecord > 0 {
		select {
		case <-time.After(t.PauseAfterRecord):
		case <-ctx.Done():
		}
	}
	return result, err
}

// Wrap journals every single-attempt tool (tools.RetryOnce, or
// Durability.MaxAttempts 1) of ts and returns the others unchanged.
func Wrap(j *Journal, ts []tools.Tool) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = t
		if t.Definition().Durability.SingleAttempt() {
			out[i] = &Journaled{Tool: t, Journal: j}
		}
	}
	return out
}

// PrepareArguments passes the wrapped tool's argument preparation through.
func (t *Journaled) PrepareArguments(args map[string]any) (map[string]any, error) {
	if p, ok := t.Tool.(tools.ArgumentPreparer); ok {
		return p.PrepareArguments(args)
	}
	return args, nil
}

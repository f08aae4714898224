package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/sandbox"
)

// BashToolName is the bash tool's name.
const BashToolName = "bash"

// Bash limits and timings.
const (
	// DefaultBashTimeout applies when a call gives no timeout (pi has none;
	// a durable worker must not run a forgotten command forever).
	DefaultBashTimeout = 2 * time.Minute
	// MaxBashTimeout caps the timeout a call may ask for.
	MaxBashTimeout = 30 * time.Minute
	// BashKillGrace is how long a process group has between SIGTERM and
	// SIGKILL.
	BashKillGrace = 2 * time.Second
	// BashUpdateInterval throttles partial results, as pi does.
	BashUpdateInterval = 100 * time.Millisecond
	// bashStdioGrace is how long output may keep draining after the shell
	// exited, for a process outside the group still holding the pipe.
	bashStdioGrace = 100 * time.Millisecond
	// DefaultMaxOutputFileBytes caps a full-output file: `yes` writes
	// about 30 MB a second, which over the maximum timeout would fill a
	// worker's disk.
	DefaultMaxOutputFileBytes = 100 << 20
)

//go:embed descriptions/bash.md
var bashDescription string

// BashParams are bash's arguments.
type BashParams struct {
	Command string   `json:"command" description:"Bash command to execute"`
	Timeout *float64 `json:"timeout,omitempty" description:"Timeout in seconds (optional, default: {{.DefaultTimeout}})"`
}

// BashOptions configure the bash tool; zero values take the defaults above.
type BashOptions struct {
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	KillGrace      time.Duration
	// OutputDir holds full outputs of truncated commands, a directory
	// per run (SavedOutputs); empty means os.TempDir()/agentloop-bash-UID.
	OutputDir string
	// Outputs, when set, is used instead of OutputDir: the worker's,
	// with its per-run cap, which it prunes.
	Outputs *SavedOutputs
	// MaxOutputFileBytes caps one full-output file; 0 means
	// DefaultMaxOutputFileBytes. The result always shows the real tail.
	MaxOutputFileBytes int64
	// Shell runs the command with -c; empty means /bin/bash, else bash on
	// PATH, else sh (pi's order).
	Shell string
	// Sandbox runs the commands; nil means sandbox.Default(), set up on
	// the first call (a call fails when no sandbox works here).
	Sandbox *sandbox.Sandbox
}

// BashTool runs a command in the workspace, in a sandbox, in its own
// process group. Its Definition and Execute are those of the typed tool
// it holds, whose function is execute.
type BashTool struct {
	Tool
	opts BashOptions
	// started, when set (tests), learns of every command started.
	started func(*sandbox.Process)
}

// NewBashTool returns the bash tool. It runs once per call (RetryOnce): a
// command is not known to be safe to repeat. pi declares
// no execution mode for bash, so batches stay parallel.
func NewBashTool(opts BashOptions) *BashTool {
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = DefaultBashTimeout
	}
	if opts.MaxTimeout <= 0 {
		opts.MaxTimeout = MaxBashTimeout
	}
	opts.DefaultTimeout = min(opts.DefaultTimeout, opts.MaxTimeout)
	if opts.KillGrace <= 0 {
		opts.KillGrace = BashKillGrace
	}
	if opts.MaxOutputFileBytes <= 0 {
		opts.MaxOutputFileBytes = DefaultMaxOutputFileBytes
	}
	if opts.Outputs == nil {
		if opts.OutputDir == "" {
			opts.OutputDir = filepath.Join(os.TempDir(), "agentloop-bash-"+strconv.Itoa(os.Geteuid()))
		}
		opts.Outputs = NewSavedOutputs(opts.OutputDir, 0)
	}
	if opts.Shell == "" {
		opts.Shell = findShell()
	}
	data := map[string]any{
		"MaxLines": DefaultMaxLines, "MaxKB": DefaultMaxBytes / 1024,
		"DefaultTimeout": seconds(opts.DefaultTimeout), "MaxTimeout": seconds(opts.MaxTimeout),
	}
	t := &BashTool{opts: opts}
	t.Tool = New(Definition{
		Name:        BashToolName,
		Label:       BashToolName,
		Description: renderText(bashDescription, data),
		Parameters:  paramsSchema(BashParams{}, data, false),
		Workspace:   true,
		Durability: Durability{
			Retry: RetryOnce,
			// One attempt must outlive the longest command and its kill.
			Timeout: opts.MaxTimeout + opts.KillGrace + time.Minute,
		},
	}, func(ctx context.Context, call Call, p BashParams) (agent.ToolResult, error) {
		return finish(t.execute(ctx, call, p))
	})
	return t
}

// Outputs is where full outputs of truncated commands go.
func (t *BashTool) Outputs() *SavedOutputs { return t.opts.Outputs }

// sandbox is the sandbox commands run in.
func (t *BashTool) sandbox() (*sandbox.Sandbox, error) {
	if t.opts.Sandbox != nil {
		return t.opts.Sandbox, nil
	}
	sb, err := sandbox.Default()
	if err != nil {
		return nil, fmt.Errorf("Cannot execute bash commands: %w", err)
	}
	return sb, nil
}

func findShell() string {
	if _, err := os.Stat("/bin/bash"); err == nil {
		return "/bin/bash"
	}
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "sh"
}

func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

func (t *BashTool) execute(ctx context.Context, call Call, p BashParams) (agent.ToolResult, error) {
	if info, err := os.Stat(call.Workspace); call.Workspace == "" || err != nil || !info.IsDir() {
		return agent.ToolResult{}, fmt.Errorf("Working directory does not exist: %s\nCannot execute bash commands.", call.Workspace)
	}
	timeout := t.opts.DefaultTimeout
	if p.Timeout != nil && *p.Timeout > 0 {
		timeout = min(time.Duration(*p.Timeout*float64(time.Second)), t.opts.MaxTimeout)
	}
	out := newBashOutput(t.opts.Outputs, call.Scope, t.opts.MaxOutputFileBytes)
	defer out.close()
	call.EmitUpdate(agent.ToolResult{Content: []agent.Content{}})
	stopUpdates := t.streamUpdates(call, out)
	res, err := t.run(ctx, p.Command, call, timeout, out)
	out.finish() // every write is in: run waits for the reader
	stopUpdates()
	if err != nil {
		if IsFault(err) {
			return agent.ToolResult{}, err
		}
		text, _ := out.format("") // the sandbox's own message, when it failed
		return agent.ToolResult{}, errors.New(appendStatus(text, err.Error()))
	}
	switch {
	case res.aborted && ShuttingDown(ctx):
		// Not the run's abort: the worker is stopping. The command did not
		// finish, and nobody asked for it to stop.
		return agent.ToolResult{}, Interrupted(context.Cause(ctx))
	case res.aborted:
		text, _ := out.format("")
		return agent.ToolResult{}, errors.New(appendStatus(text, "Command aborted"))
	case res.timedOut:
		text, _ := out.format("")
		return agent.ToolResult{}, errors.New(appendStatus(text, fmt.Sprintf("Command timed out after %s seconds", seconds(timeout))))
	}
	text, details := out.format("(no output)")
	if res.signal != "" {
		return agent.ToolResult{}, errors.New(appendStatus(text, "Command terminated by signal "+res.signal))
	}
	if res.exitCode != 0 {
		return agent.ToolResult{}, errors.New(appendStatus(text, fmt.Sprintf("Command exited with code %d", res.exitCode)))
	}
	return agent.ToolResult{Content: []agent.Content{agent.Text(text)}, Details: detailsJSON(details)}, nil
}

func appendStatus(text, status string) string {
	if text == "" {
		return status
	}
	return text + "\n\n" + status
}

// streamUpdates emits the output's tail as a partial result at most every
// BashUpdateInterval, and once more when stopped if anything is new.
func (t *BashTool) streamUpdates(call Call, out *bashOutput) (stop func()) {
	emit := func() {
		if !out.isDirty() {
			return
		}
		tr, path := out.snapshot()
		details := map[string]any{}
		if tr.Truncated {
			details["truncation"] = tr
			details["fullOutputPath"] = path
		}
		call.EmitUpdate(agent.ToolResult{Content: []agent.Content{agent.Text(tr.Content)}, Details: detailsJSON(details)})
	}
	if call.Update == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(BashUpdateInterval)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				emit()
			case <-done:
				emit()
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

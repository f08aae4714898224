package tools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/sandbox"
)

// BuiltinOptions configure the seven built-in coding tools.
type BuiltinOptions struct {
	// AllowOutsideReads lets read, ls, grep and find resolve paths outside
	// the call's workspace; write and edit stay confined.
	AllowOutsideReads bool
	// BashTimeout is bash's timeout when the call gives none; 0 means
	// DefaultBashTimeout.
	BashTimeout time.Duration
	// BashMaxTimeout caps the timeout a call may ask for; 0 means
	// MaxBashTimeout.
	BashMaxTimeout time.Duration
	// BashOutputDir is where bash keeps full outputs that were truncated,
	// a private directory per run; empty means a directory under
	// os.TempDir(). A run's read, grep, find and ls may read its own
	// directory even when confined, since bash's notices point there.
	BashOutputDir string
	// BashOutputs, when set, is used instead of BashOutputDir (the
	// worker's, with its per-run cap, which it prunes).
	BashOutputs *SavedOutputs
	// Sandbox runs bash's commands; nil means sandbox.Default().
	Sandbox *sandbox.Sandbox
}

// BuiltinNames are the names of the tools Builtins returns: every worker
// of this build can have them, so a worker without one of them lacks it
// by configuration, not because the name is a typo.
var BuiltinNames = agent.BuiltinToolNames

// Builtins returns pi's seven coding tools: read, bash, edit, write, grep,
// find, ls.
func Builtins(opts BuiltinOptions) []Tool {
	bash := NewBashTool(BashOptions{
		DefaultTimeout: opts.BashTimeout,
		MaxTimeout:     opts.BashMaxTimeout,
		OutputDir:      opts.BashOutputDir,
		Outputs:        opts.BashOutputs,
		Sandbox:        opts.Sandbox,
	})
	reads := ReadOptions{AllowOutsideReads: opts.AllowOutsideReads, Outputs: bash.Outputs()}
	return []Tool{
		NewReadTool(reads),
		bash,
		NewEditTool(),
		NewWriteTool(),
		NewGrepTool(reads),
		NewFindTool(reads),
		NewLsTool(reads),
	}
}

// ReadOptions configure the tools that only read: read, ls, grep, find.
type ReadOptions struct {
	// AllowOutsideReads lets paths resolve outside the workspace.
	AllowOutsideReads bool
	// ExtraReadDirs may be read even when confined.
	ExtraReadDirs []string
	// Outputs are bash's saved outputs: a call may read its own run's
	// (Call.Scope) even when confined, and no other run's.
	Outputs *SavedOutputs
}

// readDefinition is the definition of a tool that only reads the
// workspace (read, grep, find, ls): its description and its parameters'
// descriptions are templates over data, which quote the code's limits.
func readDefinition(name, description string, params, data any) Definition {
	return Definition{
		Name:          name,
		Label:         name,
		Description:   renderText(description, data),
		Parameters:    paramsSchema(params, data, false),
		ExecutionMode: agent.ExecutionParallel,
		ReadOnly:      true,
		Workspace:     true,
		Durability:    Durability{Retry: RetrySafe},
	}
}

func (o ReadOptions) workspace(call Call) (*workspace, error) {
	var extra []string
	for _, d := range o.ExtraReadDirs {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			extra = append(extra, real)
		}
	}
	if o.Outputs != nil {
		if dir := o.Outputs.ExistingRunDir(call.Scope); dir != "" {
			extra = append(extra, dir)
		}
	}
	w, err := openWorkspace(call.Workspace, o.AllowOutsideReads, extra...)
	if err == nil && o.Outputs != nil {
		w.fence, _ = realPath(o.Outputs.Root())
	}
	return w, err
}

// errAborted is pi's text for a call stopped by its abort signal.
var errAborted = errors.New("Operation aborted")

func aborted(ctx context.Context) error {
	if ctx.Err() != nil {
		return errAborted
	}
	return nil
}

// nodeError renders a file system error as Node does ("ENOENT: no such file
// or directory, access '/x'"), the text pi's tools throw and models know.
func nodeError(err error, op, path string) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err
	}
	code, text := errnoName(errno)
	if code == "" {
		return err
	}
	if errno == syscall.EISDIR {
		return fmt.Errorf("%s: %s, %s", code, text, op)
	}
	return fmt.Errorf("%s: %s, %s '%s'", code, text, op, path)
}

func errnoName(e syscall.Errno) (code, text string) {
	switch e {
	case syscall.ENOENT:
		return "ENOENT", "no such file or directory"
	case syscall.EACCES:
		return "EACCES", "permission denied"
	case syscall.EPERM:
		return "EPERM", "operation not permitted"
	case syscall.EISDIR:
		return "EISDIR", "illegal operation on a directory"
	case syscall.ENOTDIR:
		return "ENOTDIR", "not a directory"
	case syscall.ELOOP:
		return "ELOOP", "too many symbolic links encountered"
	}
	return "", ""
}

// fileLocks serialises write and edit on the same file within this worker
// (pi's withFileMutationQueue), so parallel calls cannot interleave a
// read-modify-write.
var fileLocks sync.Map // real path -> *sync.Mutex

// lockToChange is how write and edit begin: path resolved in the call's
// workspace, confined to it, and its file lock taken; err when the call
// was aborted while it waited for the lock.
func lockToChange(ctx context.Context, call Call, path string) (ws *workspace, abs string, unlock func(), err error) {
	ws, err = openWorkspace(call.Workspace, false)
	if err != nil {
		return nil, "", nil, err
	}
	abs, err = ws.Resolve(path)
	if err != nil {
		return nil, "", nil, err
	}
	unlock = lockFile(abs)
	if err := aborted(ctx); err != nil {
		unlock()
		return nil, "", nil, err
	}
	return ws, abs, unlock, nil
}

func lockFile(abs string) func() {
	key := abs
	if real, err := realPath(abs); err == nil {
		key = real
	}
	m, _ := fileLocks.LoadOrStore(key, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

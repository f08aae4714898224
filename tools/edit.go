package tools

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/durable-agents/agentloop/agent"
)

// EditToolName is the edit tool's name.
const EditToolName = "edit"

//go:embed descriptions/edit.md
var editDescription string

const utf8BOM = "\uFEFF"

// EditParams are edit's arguments (pi 0.73's shape; the older top-level
// oldText/newText is folded into edits by PrepareArguments).
type EditParams struct {
	Path  string            `json:"path" description:"Path to the file to edit (relative or absolute)"`
	Edits []EditReplacement `json:"edits" description:"One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead."`
}

// EditDetails are edit's result details.
type EditDetails struct {
	Diff             string `json:"diff"`
	FirstChangedLine int    `json:"firstChangedLine,omitempty"`
}

// NewEditTool returns the edit tool: it replaces unique text regions of
// one file. It runs once per call (RetryOnce): a retry after a lost attempt
// would apply the replacement to text the first attempt may already have
// edited. pi declares no execution mode for it, so batches stay parallel;
// same-file edits and writes take a per-file lock.
func NewEditTool() Tool {
	done := &appliedEdits{}
	return New(Definition{
		Name:        EditToolName,
		Label:       EditToolName,
		Description: renderText(editDescription, nil),
		Parameters:  paramsSchema(EditParams{}, nil, true),
		Workspace:   true,
		Durability:  Durability{Retry: RetryOnce},
	}, func(ctx context.Context, call Call, p EditParams) (agent.ToolResult, error) {
		return finish(edit(ctx, done, call, p))
	}, WithPrepareArguments(prepareEditArguments))
}

// prepareEditArguments is pi's prepareEditArguments: edits sent as a JSON
// string are parsed, and a top-level oldText/newText pair becomes one more
// entry of edits.
func prepareEditArguments(args map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = v
	}
	if s, ok := out["edits"].(string); ok {
		var parsed []any
		if json.Unmarshal([]byte(s), &parsed) == nil {
			out["edits"] = parsed
		}
	}
	oldText, ok1 := out["oldText"].(string)
	newText, ok2 := out["newText"].(string)
	if !ok1 || !ok2 {
		return out, nil
	}
	edits, _ := out["edits"].([]any)
	edits = append(slices.Clone(edits), map[string]any{"oldText": oldText, "newText": newText})
	delete(out, "oldText")
	delete(out, "newText")
	out["edits"] = edits
	return out, nil
}

// edit applies one call's edits; done answers the retry of a call whose
// edit already landed.
func edit(ctx context.Context, done *appliedEdits, call Call, p EditParams) (agent.ToolResult, error) {
	if len(p.Edits) == 0 {
		return agent.ToolResult{}, errors.New("Edit tool input is invalid. edits must contain at least one replacement.")
	}
	ws, abs, unlock, err := lockToChange(ctx, call, p.Path)
	if err != nil {
		return agent.ToolResult{}, err
	}
	defer unlock()
	if err := syscall.Access(abs, 0x4|0x2); err != nil { // R_OK|W_OK, as pi checks
		return agent.ToolResult{}, fmt.Errorf("Could not edit file: %s. %s.", p.Path, errorCode(err))
	}
	files, err := ws.tree(abs, false)
	if err != nil {
		return agent.ToolResult{}, err
	}
	defer files.close()
	// One open, through the workspace's root, for the read and the write:
	// the file edited is the file checked.
	f, err := files.open(abs, os.O_RDWR, 0)
	if err != nil {
		if isOutside(err) {
			return agent.ToolResult{}, err
		}
		return agent.ToolResult{}, fmt.Errorf("Could not edit file: %s. %s.", p.Path, errorCode(err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err == nil {
		err = checkRegular(info, p.Path)
	}
	if err != nil {
		return agent.ToolResult{}, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return agent.ToolResult{}, fmt.Errorf("Could not edit file: %s. %s.", p.Path, errorCode(err))
	}
	if r, ok := done.lookup(call.IdempotencyKey, abs, data); ok {
		return r, nil
	}
	if isBinary(data) {
		return agent.ToolResult{}, fmt.Errorf("Could not edit file: %s. It is a binary file; use bash to change it.", p.Path)
	}
	raw := string(data)
	bom := ""
	if strings.HasPrefix(raw, utf8BOM) {
		bom, raw = utf8BOM, raw[len(utf8BOM):]
	}
	updated, err := applyEdits(raw, p.Edits, p.Path)
	if err != nil {
		return agent.ToolResult{}, err
	}
	final := []byte(bom + updated)
	if err := f.Truncate(0); err != nil {
		return agent.ToolResult{}, nodeError(err, "open", abs)
	}
	if _, err := f.WriteAt(final, 0); err != nil {
		return agent.ToolResult{}, nodeError(err, "open", abs)
	}
	diff, first := unifiedDiff(toLF(raw), toLF(updated))
	r := agent.ToolResult{
		Content: []agent.Content{agent.Text(fmt.Sprintf("Successfully replaced %d block(s) in %s.", len(p.Edits), p.Path))},
		Details: detailsJSON(EditDetails{Diff: diff, FirstChangedLine: first}),
	}
	done.store(call.IdempotencyKey, abs, final, r)
	return r, nil
}

// errorCode is pi's "Error code: ENOENT" for a failed access.
func errorCode(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if code, _ := errnoName(errno); code != "" {
			return "Error code: " + code
		}
	}
	return err.Error()
}

// appliedEdits remembers the last edits this worker applied, by idempotency
// key, so that a retry of a call whose edit landed (an attempt that timed
// out after writing) returns the same result instead of "Could not find the
// exact text". It only answers while the file still holds what the edit
// wrote.
type appliedEdits struct {
	mu   sync.Mutex
	byID map[string]appliedEdit
	keys []string
}

type appliedEdit struct {
	path   string
	sum    [32]byte
	result agent.ToolResult
}

const appliedEditsKept = 256

func (a *appliedEdits) lookup(key, path string, content []byte) (agent.ToolResult, bool) {
	if key == "" {
		return agent.ToolResult{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.byID[key]
	if !ok || e.path != path || e.sum != sha256.Sum256(content) {
		return agent.ToolResult{}, false
	}
	return e.result, true
}

func (a *appliedEdits) store(key, path string, content []byte, r agent.ToolResult) {
	if key == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byID == nil {
		a.byID = map[string]appliedEdit{}
	}
	if _, ok := a.byID[key]; !ok {
		a.keys = append(a.keys, key)
	}
	a.byID[key] = appliedEdit{path: path, sum: sha256.Sum256(content), result: r}
	if len(a.keys) > appliedEditsKept {
		delete(a.byID, a.keys[0])
		a.keys = a.keys[1:]
	}
}

package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"time"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/hooks"
	"github.com/durable-agents/agentloop/tools"
)

// HookName is the name the scenario's hooks are registered under.
const HookName = "scenario"

// scenarioTool is a test tool that behaves as its scenario says, through
// the same interfaces real tools use: partial results, RunControl for
// steering, follow-ups and abort, and the context for cancellation.
type scenarioTool struct {
	spec ToolSpec
}

func (t scenarioTool) Definition() tools.Definition {
	desc := "test tool " + t.spec.Name
	if t.spec.Description != nil {
		desc = *t.spec.Description
	}
	return tools.Definition{
		Name:          t.spec.Name,
		Label:         t.spec.Name,
		Description:   desc,
		Parameters:    t.spec.Parameters,
		ExecutionMode: agent.ExecutionMode(t.spec.ExecutionMode),
	}
}

// PrepareArguments applies renameKeys; a key moves only when the target is
// absent.
func (t scenarioTool) PrepareArguments(args map[string]any) (map[string]any, error) {
	if t.spec.PrepareArguments == nil {
		return args, nil
	}
	out := make(map[string]any, len(args))
	maps.Copy(out, args)
	for _, r := range t.spec.PrepareArguments.RenameKeys {
		v, has := out[r.from]
		if _, taken := out[r.to]; has && !taken {
			out[r.to] = v
			delete(out, r.from)
		}
	}
	return out, nil
}

func (t scenarioTool) Execute(ctx context.Context, call tools.Call) (agent.ToolResult, error) {
	b, err := t.spec.behaviorFor(call.ID)
	if err != nil {
		return agent.ToolResult{}, err
	}
	for _, u := range b.Updates {
		content, err := textContent(u)
		if err != nil {
			return agent.ToolResult{}, err
		}
		// At the instant the call starts in pi's event loop, whatever
		// the wall clock of a loaded machine says.
		call.EmitUpdateAt(agent.ToolResult{Content: content, Details: json.RawMessage("{}")}, 0)
	}
	// Messages too are queued at the call's start in pi's time: the
	// batch puts them in call order, as pi's calls queue them one after
	// another in one instant, whichever signal arrives first.
	for _, s := range b.Steer {
		if err := call.SteerAt(ctx, agent.UserText(s, 0), 0); err != nil {
			return agent.ToolResult{}, err
		}
	}
	for _, s := range b.FollowUp {
		if err := call.FollowUpAt(ctx, agent.UserText(s, 0), 0); err != nil {
			return agent.ToolResult{}, err
		}
	}
	if b.Abort {
		if err := call.Run.Abort(ctx, "aborted by tool "+t.spec.Name); err != nil {
			return agent.ToolResult{}, err
		}
	}
	// The reference's tools live in one event loop: their durations are
	// their scripted delays, and a delay cut short by an abort ends in the
	// instant of the abort, which tools of this harness only send at their
	// start. Reporting that time, not the wall clock, lets the workflow
	// order a parallel batch's ends as pi does.
	delay := time.Duration(b.DelayMs * float64(time.Millisecond))
	err = sleep(ctx, delay)
	if call.ReportDuration != nil {
		if err != nil {
			call.ReportDuration(0)
		} else {
			call.ReportDuration(delay)
		}
	}
	if err != nil {
		return agent.ToolResult{}, err
	}
	if b.Throw != "" {
		return agent.ToolResult{}, errors.New(b.Throw)
	}
	content := []agent.Content{agent.Text(t.spec.Name + " ok")}
	switch {
	case b.EchoArgs:
		content = []agent.Content{agent.Text(canonicalJSON(call.Args))}
	case len(b.Result) > 0 && string(b.Result) != "null":
		if content, err = textContent(b.Result); err != nil {
			return agent.ToolResult{}, err
		}
	}
	details := b.Details
	if len(details) == 0 || string(details) == "null" {
		details = json.RawMessage("{}")
	}
	return agent.ToolResult{Content: content, Details: details, Terminate: b.Terminate}, nil
}

// sleep is the reference's sleep: no wait at all for zero, and an "aborted"
// error when the run is aborted before or during the wait.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	if ctx.Err() != nil {
		return errors.New("aborted")
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return errors.New("aborted")
	}
}

// textContent turns a string into one text block; anything else must be a
// list of blocks.
func textContent(raw json.RawMessage) ([]agent.Content, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []agent.Content{agent.Text(s)}, nil
	}
	var blocks []agent.Content
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, err
	}
	return blocks, nil
}

// registerHooks turns the scenario's rules into hooks named HookName.
func registerHooks(r *hooks.Registry, h Hooks) {
	if len(h.BeforeToolCall) > 0 {
		r.RegisterBefore(HookName, beforeHook(h.BeforeToolCall))
	}
	if len(h.AfterToolCall) > 0 {
		r.RegisterAfter(HookName, afterHook(h.AfterToolCall))
	}
}

// beforeHook is the reference's beforeToolCall: the first rule matching
// the call throws, blocks or lets it run.
func beforeHook(rules []BeforeRule) hooks.Before {
	return func(_ context.Context, c hooks.BeforeContext) (*hooks.BeforeResult, error) {
		for _, rule := range rules {
			if !rule.matches(c.ToolCall.Name, c.ToolCall.ID) {
				continue
			}
			if rule.Throw != "" {
				return nil, errors.New(rule.Throw)
			}
			if rule.Block {
				return &hooks.BeforeResult{Block: true, Reason: rule.Reason}, nil
			}
			return nil, nil
		}
		return nil, nil
	}
}

// afterHook is the reference's afterToolCall: the first rule matching the
// call throws or overrides the result.
func afterHook(rules []AfterRule) hooks.After {
	return func(_ context.Context, c hooks.AfterContext) (*hooks.AfterResult, error) {
		for _, rule := range rules {
			if !rule.matches(c.ToolCall.Name, c.ToolCall.ID) {
				continue
			}
			if rule.Throw != "" {
				return nil, errors.New(rule.Throw)
			}
			o := &hooks.AfterResult{}
			if rule.Override != nil {
				if len(rule.Override.Content) > 0 && string(rule.Override.Content) != "null" {
					content, err := textContent(rule.Override.Content)
					if err != nil {
						return nil, err
					}
					o.Content = content
				}
				o.Details = rule.Override.Details
				o.IsError = rule.Override.IsError
				o.Terminate = rule.Override.Terminate
			}
			return o, nil
		}
		return nil, nil
	}
}

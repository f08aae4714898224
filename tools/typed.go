package tools

import (
	"context"

	"github.com/durable-agents/agentloop/agent"
)

// New returns a tool whose arguments decode into a P, as the built-in
// tools' Params structs do. When def.Parameters is nil it is P's schema:
// json tags name the properties (omitempty makes one optional), description
// tags describe them (text/template syntax, rendered over no data). A
// returned error becomes an error result, as Tool.Execute says. Partial
// results go out through call.EmitUpdate.
func New[P any](def Definition, run func(ctx context.Context, call Call, p P) (agent.ToolResult, error), opts ...Option) Tool {
	if def.Parameters == nil {
		var p P
		def.Parameters = paramsSchema(p, nil, false)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	t := typed[P]{def: def, run: run}
	if o.prepare != nil {
		return preparing[P]{typed: t, prepare: o.prepare}
	}
	return t
}

// Option adds to a tool made by New what only some tools need.
type Option func(*options)

type options struct {
	prepare func(args map[string]any) (map[string]any, error)
}

// WithPrepareArguments gives the tool pi's prepareArguments: prepare
// rewrites a call's raw arguments, an older shape of them for instance,
// before they are validated against the schema (see ArgumentPreparer).
func WithPrepareArguments(prepare func(args map[string]any) (map[string]any, error)) Option {
	return func(o *options) { o.prepare = prepare }
}

type typed[P any] struct {
	def Definition
	run func(context.Context, Call, P) (agent.ToolResult, error)
}

func (t typed[P]) Definition() Definition { return t.def }

func (t typed[P]) Execute(ctx context.Context, call Call) (agent.ToolResult, error) {
	var p P
	if err := decodeParams(call.Args, &p); err != nil {
		return agent.ToolResult{}, err
	}
	return t.run(ctx, call, p)
}

// preparing is a typed tool that is also an ArgumentPreparer: only tools
// given one are, since PrepareToolCall calls it when a tool has it.
type preparing[P any] struct {
	typed[P]
	prepare func(map[string]any) (map[string]any, error)
}

func (t preparing[P]) PrepareArguments(args map[string]any) (map[string]any, error) {
	return t.prepare(args)
}

package tools

import (
	"context"

	"github.com/durable-agents/agentloop/agent"
)

// New returns a tool whose arguments decode into a P, as the built-in
// tools' Params structs do. When def.Parameters is nil it is P's schema:
// json tags name the properties (omitempty makes one optional), description
// tags describe them (text/template syntax, rendered over no data). A
// returned error becomes an error result, as Tool.Execute says.
func New[P any](def Definition, run func(ctx context.Context, call Call, p P) (agent.ToolResult, error)) Tool {
	if def.Parameters == nil {
		var p P
		def.Parameters = paramsSchema(p, nil, false)
	}
	return typed[P]{def: def, run: run}
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

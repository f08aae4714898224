package workflows

import (
	"encoding/json"
	"reflect"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// Unknown fields in inputs and Update arguments: the wire types remember
// the first field their JSON had that they lack (agentapi's decode.go and
// fields.go); here the workflow refuses them, and the arguments that are
// not types of their own (a message, a budget, an abort) do the same.

// unknownFieldsChange is the change after which a run refuses an input
// with a field it does not have: a misspelt "promt" would otherwise start
// a run without its prompt. Runs that started before it go on ignoring
// such fields.
const unknownFieldsChange = "refuse-unknown-input-fields"

// refuseUnknownField says whether a run refuses its input for a field it
// does not have. The version is asked only when there is such a field, so
// the histories of all other runs are as they were.
func refuseUnknownField(ctx workflow.Context, field string) bool {
	return field != "" && workflow.GetVersion(ctx, unknownFieldsChange, workflow.DefaultVersion, 1) == 1
}

// messageArg is the message a steer or follow-up Update carries.
type messageArg struct {
	agent.Message
	unknown string
}

func (m *messageArg) UnmarshalJSON(b []byte) error {
	err := json.Unmarshal(b, &m.Message)
	m.unknown = agentapi.UnknownKey(b, reflect.TypeFor[agent.Message]())
	return err
}

func (m messageArg) FieldError() error {
	return agentapi.UnknownFieldError(m.unknown, "a message", reflect.TypeFor[agent.Message]())
}

// budgetArg is the budget a setBudget Update carries.
type budgetArg struct {
	agent.Budget
	unknown string
}

func (b *budgetArg) UnmarshalJSON(data []byte) error {
	unknown, err := agentapi.DecodeChecked(data, &b.Budget)
	b.unknown = unknown
	return err
}

func (b budgetArg) FieldError() error {
	return agentapi.UnknownFieldError(b.unknown, "a budget", reflect.TypeFor[agent.Budget]())
}

// abortArg is the request an abort Update carries.
type abortArg struct {
	agentapi.AbortRequest
	unknown string
}

func (r *abortArg) UnmarshalJSON(b []byte) error {
	unknown, err := agentapi.DecodeChecked(b, &r.AbortRequest)
	r.unknown = unknown
	return err
}

func (r abortArg) FieldError() error {
	return agentapi.UnknownFieldError(r.unknown, "an abort", reflect.TypeFor[agentapi.AbortRequest]())
}

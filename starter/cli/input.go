package cli

import (
	"fmt"

	"github.com/durable-agents/agentloop/agentapi"
)

// decodeInput decodes a JSON input file strictly, in the input's words: a
// field the input does not have is refused by name (a misspelt "promt"
// would otherwise start a run without its prompt), and a value of the
// wrong type names its JSON field and the JSON wanted, not a Go type.
// The error is a refusal (ExitRefused).
func decodeInput(name string, b []byte, in *agentapi.AgentLoopInput) error {
	if err := agentapi.DecodeInputStrict(b, in); err != nil {
		return exitError{code: ExitRefused, msg: fmt.Sprintf("%s: %s", name, err)}
	}
	return nil
}

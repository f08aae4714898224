package cli

import (
	"errors"
	"flag"

	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// The starter's exit codes (README, docs/api.md): a script can tell a run
// that stopped as it should from one that failed, was aborted or ran out
// of budget, and input the run refused from a starter that failed.
const (
	ExitOK       = 0   // done; a run stopped normally (stopReason stop or length)
	ExitError    = 1   // a run ended with an error, or the starter failed
	ExitUsage    = 2   // bad flags or arguments
	ExitRefused  = 3   // the run or session refused the input (an Update's validator or handler)
	ExitAborted  = 4   // a run was aborted
	ExitBudget   = 5   // a run stopped at its budget, or a session refused a run for its spent budget
	ExitDetached = 130 // Ctrl-C twice: the starter left, the run goes on
)

// exitError ends the starter with code; a message that is empty was
// printed already.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

// exitCode is the exit code for a command's error.
func exitCode(err error) int {
	var x exitError
	var app *temporal.ApplicationError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitUsage
	case errors.As(err, &x):
		return x.code
	case errors.As(err, &app) && app.Type() == agentapi.ErrBudgetExhausted:
		return ExitBudget
	case errors.As(err, &app):
		return ExitRefused
	}
	return ExitError
}

// stopExit is the exit code for how a run stopped.
func stopExit(r agent.StopReason) int {
	switch r {
	case agent.StopReasonError:
		return ExitError
	case agent.StopReasonAborted:
		return ExitAborted
	case agent.StopReasonBudget:
		return ExitBudget
	}
	return ExitOK
}

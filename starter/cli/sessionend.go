package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// sessionEnded is the error of a session (or run) that closed while the
// starter followed its run, before the run's agent_end, or before an
// Update reached it: it failed (a workspace no worker holds fails a
// session when it starts), or was terminated or cancelled. nil while it
// goes on, when it completed, or when the starter cannot tell.
func (e *env) sessionEnded(ctx context.Context, id string) error {
	d, err := e.c.DescribeWorkflow(ctx, id, "")
	if err != nil || d.RawResponse.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil
	}
	err = e.c.GetWorkflow(ctx, id, "").Get(ctx, nil)
	if err == nil {
		return nil
	}
	// The command's Update was answered (the run started): sending it
	// again would not help.
	e.updateSent = false
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		err = app
	}
	return exitError{code: ExitError, msg: fmt.Sprintf("%s ended: %s", id, userMessage(err))}
}

// userMessage is err's text without what the SDK adds to a run's or
// validator's error for programs, its type and retryability.
func userMessage(err error) string {
	msg := err.Error()
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() != "" {
		msg = strings.Replace(msg, app.Error(), app.Message(), 1)
	}
	return msg
}

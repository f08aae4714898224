package activities

import (
	"context"
	"errors"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
)

// DescribeChildrenInput names the sub-agent workflows a parent carried
// across its continue-as-new (workflows/subagent_carry.go).
type DescribeChildrenInput struct {
	WorkflowIDs []string `json:"workflowIds"`
}

// DescribeChildrenOutput is each one's status.
type DescribeChildrenOutput struct {
	Children []ChildStatus `json:"children"`
}

// ChildStatus is a child workflow's status, one of the Child* names.
type ChildStatus struct {
	WorkflowID string `json:"workflowId"`
	Status     string `json:"status"`
}

// The statuses DescribeChildren reports: a child that continued as new
// runs on.
const (
	ChildRunning    = "running"
	ChildCompleted  = "completed"
	ChildCanceled   = "canceled"
	ChildFailed     = "failed"
	ChildTerminated = "terminated"
	ChildTimedOut   = "timedOut"
	ChildNotFound   = "notFound"
)

// DescribeChildren looks up the latest run of each workflow, as a local
// activity of the parent: one DescribeWorkflowExecution per child.
func (a *Activities) DescribeChildren(ctx context.Context, in DescribeChildrenInput) (DescribeChildrenOutput, error) {
	var out DescribeChildrenOutput
	for _, id := range in.WorkflowIDs {
		d, err := a.Client.DescribeWorkflow(ctx, id, "")
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
			out.Children = append(out.Children, ChildStatus{WorkflowID: id, Status: ChildNotFound})
			continue
		case err != nil:
			return DescribeChildrenOutput{}, err
		}
		out.Children = append(out.Children, ChildStatus{WorkflowID: id, Status: childStatus(d.RawResponse.GetWorkflowExecutionInfo().GetStatus())})
	}
	return out, nil
}

func childStatus(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return ChildCompleted
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return ChildCanceled
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return ChildFailed
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return ChildTerminated
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return ChildTimedOut
	}
	return ChildRunning
}

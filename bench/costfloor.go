package main

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// The floor of bench cost: a plain Temporal workflow with one activity
// per step and nothing else (no event log, no live stream, no search
// attributes), driven the way a plain client drives one.

// costFloorInput shapes CostFloor: Turns steps of one activity followed by
// Parallel activities of Tool at once, then one more (an agent run's
// shape); or one activity of Model; or Prompts rounds of an Update, an
// activity, an Update and two activities (a session's prompt with an
// approval).
type costFloorInput struct {
	Turns    int           `json:"turns,omitempty"`
	Parallel int           `json:"parallel,omitempty"`
	Tool     time.Duration `json:"tool,omitempty"`
	Model    time.Duration `json:"model,omitempty"`
	Prompts  int           `json:"prompts,omitempty"`
}

const floorUpdate = "step"

// CostFloor is the floor workflow.
func CostFloor(ctx workflow.Context, in costFloorInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	updates := 0
	if err := workflow.SetUpdateHandler(ctx, floorUpdate, func(workflow.Context) error { updates++; return nil }); err != nil {
		return err
	}
	step := func(d time.Duration) workflow.Future { return workflow.ExecuteActivity(ctx, floorStep, d) }
	if in.Model > 0 {
		return step(in.Model).Get(ctx, nil)
	}
	for range in.Turns {
		if err := step(0).Get(ctx, nil); err != nil {
			return err
		}
		var fs []workflow.Future
		for range in.Parallel {
			fs = append(fs, step(in.Tool))
		}
		for _, f := range fs {
			if err := f.Get(ctx, nil); err != nil {
				return err
			}
		}
	}
	if in.Turns > 0 {
		return step(0).Get(ctx, nil)
	}
	for i := range in.Prompts {
		if err := workflow.Await(ctx, func() bool { return updates > 2*i }); err != nil {
			return err
		}
		if err := step(0).Get(ctx, nil); err != nil {
			return err
		}
		if err := workflow.Await(ctx, func() bool { return updates > 2*i+1 }); err != nil {
			return err
		}
		if err := step(in.Tool).Get(ctx, nil); err != nil {
			return err
		}
		if err := step(0).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

func floorStep(ctx context.Context, d time.Duration) error {
	time.Sleep(d)
	return nil
}

// floor runs CostFloor to its end as a plain client would: start it, send
// its Updates, wait for the result (one long poll of its history).
func (r *costBench) floor(ctx context.Context, in costFloorInput) (costFigures, error) {
	id := fmt.Sprintf("cost-floor-%d", time.Now().UnixNano())
	return r.measure(ctx, id, func() error {
		run, err := r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: r.queue}, CostFloor, in)
		if err != nil {
			return err
		}
		if in.Prompts == 0 {
			return run.Get(ctx, nil)
		}
		for range 2 * in.Prompts {
			u, err := r.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: floorUpdate,
				WaitForStage: client.WorkflowUpdateStageCompleted})
			if err != nil {
				return err
			}
			if err := u.Get(ctx, nil); err != nil {
				return err
			}
		}
		return run.Get(ctx, nil)
	})
}

// idleFloor is a workflow waiting for an Update that never comes (a
// session of one prompt that nobody sends), its
// history long-polled by a client for d, scaled to an hour.
func (r *costBench) idleFloor(ctx context.Context, d time.Duration) (costFigures, error) {
	id := fmt.Sprintf("cost-floor-idle-%d", time.Now().UnixNano())
	run, err := r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: r.queue}, CostFloor, costFloorInput{Prompts: 1})
	if err != nil {
		return costFigures{}, err
	}
	defer func() { _ = r.c.TerminateWorkflow(context.Background(), id, "", "bench over") }()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		it := r.c.GetWorkflowHistory(wctx, id, run.GetRunID(), true, 0)
		for it.HasNext() {
			if _, err := it.Next(); err != nil {
				return
			}
		}
	}()
	f, err := r.measure(ctx, id, func() error { return sleep(ctx, d) })
	if err != nil {
		return costFigures{}, err
	}
	f.workflow, f.activity = 0, 0
	return f.scale(float64(time.Hour) / float64(f.window)), nil
}

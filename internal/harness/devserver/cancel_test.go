package devserver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// Requests cancelled while the server reads its store must not break the
// store. The CLI's own SQLite driver (v1.34.1) leaked a cancelled query's
// rows; the one connection then failed every later query with
// "interrupted (9)" and every request with "Namespace default is not
// found", for good: 30 tests of CI's run failed that way. The cancelled
// requests here are what clients do all day (a watcher stops, a long poll
// is given up, a test ends); the server must answer normally afterwards.
func TestCancelledRequestsLeaveTheStoreWorking(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := Start(ctx, Options{})
	require.NoError(t, err)
	defer func() { _ = srv.Stop() }()
	c := srv.Client()

	const runs = 20
	for i := range runs {
		_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: fmt.Sprintf("cancelled-%d", i), TaskQueue: "nobody-polls"}, "Nothing")
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1500 {
				rctx, rcancel := context.WithTimeout(ctx, time.Duration(rand.IntN(4000))*time.Microsecond)
				id := fmt.Sprintf("cancelled-%d", (g+i)%runs)
				switch i % 4 {
				case 3:
					_, _ = c.WorkflowService().GetWorkflowExecutionHistory(rctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
						Namespace: "default", Execution: &commonpb.WorkflowExecution{WorkflowId: id}})
				case 0:
					_, _ = c.DescribeWorkflow(rctx, id, "")
				case 1:
					_, _ = c.WorkflowService().ListWorkflowExecutions(rctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"})
				default:
					_ = c.SignalWorkflow(rctx, id, "", "poke", i)
				}
				rcancel()
			}
		}()
	}
	wg.Wait()
	for i := range runs {
		_, err := c.DescribeWorkflow(ctx, fmt.Sprintf("cancelled-%d", i), "")
		require.NoError(t, err, "the server's store after cancelled requests")
	}
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "after", TaskQueue: "nobody-polls"}, "Nothing")
	require.NoError(t, err, "a new run after cancelled requests")
}

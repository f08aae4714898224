package agentclient

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
)

func TestTransient(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{serviceerror.NewUnavailable("connection refused"), true},
		{serviceerror.NewDeadlineExceeded("query timed out"), true},
		{fmt.Errorf("query events of x: %w", serviceerror.NewQueryFailed("[TMPRL1101] Potential deadlock detected")), true},
		{serviceerror.NewQueryFailed("unknown queryType events. KnownQueryTypes=[__stack_trace]"), false},
		{fmt.Errorf("query events of x: %w", serviceerror.NewNotFound("workflow not found")), false},
		{serviceerror.NewNamespaceNotFound("nope"), false},
		{serviceerror.NewInvalidArgument("bad"), false},
		{serviceerror.NewPermissionDenied("no", ""), false},
		{final{errors.New("does not decode")}, false},
		{nil, false},
	} {
		require.Equal(t, tc.want, transient(ctx, tc.err), "%v", tc.err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.False(t, transient(cancelled, serviceerror.NewUnavailable("x")), "the caller gave up")
}

func TestRetry(t *testing.T) {
	ctx := context.Background()
	calls := 0
	err := retry(ctx, time.Minute, func() error {
		if calls++; calls < 3 {
			return serviceerror.NewUnavailable("restarting")
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 3, calls, "retried until the server answered")

	calls = 0
	err = retry(ctx, time.Minute, func() error { calls++; return serviceerror.NewNotFound("gone") })
	require.Error(t, err)
	require.Equal(t, 1, calls, "a final error is not retried")

	calls = 0
	err = retry(ctx, 250*time.Millisecond, func() error { calls++; return serviceerror.NewUnavailable("down") })
	var unavailable *serviceerror.Unavailable
	require.ErrorAs(t, err, &unavailable, "gives up once failing longer than retryFor, with the last error")
	require.GreaterOrEqual(t, calls, 2)
}

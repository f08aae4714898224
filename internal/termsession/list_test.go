package termsession

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/converter"

	"github.com/stretchr/testify/require"
)

// `session list` shows a session's title (its first prompt), status,
// model, turns, cost and last activity; the Web UI gets the title as the
// static summary and the idle status in the current details.
func TestSessionList(t *testing.T) {
	ws := workspace(t)
	start := starter(t, ws, "session", "start", "-workspace", ".", "list the files")
	start.waitFor("ls returned:")
	require.Equal(t, 0, start.exit())
	id := sessionID.FindStringSubmatch(start.screen())[1]

	// The list reads visibility, which the server updates after the run's
	// upserts: ask until the session shows as idle.
	row := regexp.MustCompile(regexp.QuoteMeta(id) + `\s+list the files\s+idle\s+scripted/demo\s+2\s+\$0\.0000\s+(just now|\d+ min ago)`)
	deadline := time.Now().Add(waitLong)
	for {
		list := starter(t, ws, "session", "list")
		require.Equal(t, 0, list.exit())
		require.Contains(t, list.screen(), "ID")
		require.Contains(t, list.screen(), "LAST ACTIVITY")
		if row.MatchString(list.screen()) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session list did not show %s as idle:\n%s", id, list.screen())
		}
		time.Sleep(time.Second)
	}

	c := dial(t)
	ctx := context.Background()
	desc, err := c.DescribeWorkflow(ctx, id, "")
	require.NoError(t, err)
	var summary string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(desc.RawResponse.GetExecutionConfig().GetUserMetadata().GetSummary(), &summary))
	require.Equal(t, "list the files", summary)
	resp, err := c.QueryWorkflow(ctx, id, "", "__temporal_workflow_metadata")
	require.NoError(t, err)
	var meta sdkpb.WorkflowMetadata
	require.NoError(t, resp.Get(&meta))
	require.True(t, strings.HasPrefix(meta.GetCurrentDetails(), "**idle** · turn 2 · scripted/demo"), meta.GetCurrentDetails())
	require.Contains(t, meta.GetCurrentDetails(), "list the files")
}

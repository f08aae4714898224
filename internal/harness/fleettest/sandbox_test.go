package fleettest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/fleettest"
)

// A root worker host under bubblewrap (issue 27) runs a run's commands as
// nobody on an idmapped mount of the fleet's workspace: the command sees
// uid 65534 and its file as its own, cannot read a root-only file, and
// what it writes lands on disk as the workspace owner's.
func TestRootHostRunsCommandsAsNobody(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs a root worker")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("needs bubblewrap")
	}
	m := newHostModel()
	close(m.gate)
	f := fleettest.Start(t, fleettest.Options{Decide: m.decide})
	f.AddHost("host-root", nil, "-sandbox", "bwrap") // after the fleet's -sandbox none
	f.WaitCurrent(time.Minute)
	var ws syscall.Stat_t
	require.NoError(t, syscall.Stat(f.Workspace, &ws))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, err := agentclient.Start(ctx, f.Client, "loop-root", f.Queue, agentapi.AgentLoopInput{LoopConfig: config(f),
		Prompt: "Run: echo uid $(id -u); echo x > made-by-bash && stat -c 'sees %u' made-by-bash; cat /etc/shadow >/dev/null 2>&1 || echo shadow-refused"})
	require.NoError(t, err)
	var res agentapi.AgentLoopResult
	require.NoError(t, run.Get(ctx, &res))
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	out := m.sawAll()
	require.Len(t, out, 1)
	require.Equal(t, "uid 65534\nsees 65534\nshadow-refused", strings.TrimSpace(out[0]))
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(filepath.Join(f.Workspace, "made-by-bash"), &st))
	require.Equal(t, [2]uint32{ws.Uid, ws.Gid}, [2]uint32{st.Uid, st.Gid}, "on disk the file is the workspace owner's")
	t.Logf("the command saw: %q; on disk %d:%d", out[0], st.Uid, st.Gid)
}

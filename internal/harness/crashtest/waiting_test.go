package crashtest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/internal/harness/crashtest"
	"github.com/durable-agents/agentloop/internal/harness/logbuf"
	"github.com/durable-agents/agentloop/starter/cli"
	"github.com/durable-agents/agentloop/workflows"
)

func (e *env) starter(id string) (*logbuf.Buffer, <-chan int) {
	e.t.Helper()
	in := e.input(crashtest.ModelReadOnly, crashtest.SlowReadTool)
	b, err := json.Marshal(in)
	require.NoError(e.t, err)
	path := filepath.Join(e.dir, id+".json")
	require.NoError(e.t, os.WriteFile(path, b, 0o600))
	out := &logbuf.Buffer{}
	code := make(chan int, 1)
	go func() {
		code <- cli.Main([]string{"-address", e.hostPort, "-store", filepath.Join(e.dir, "content"),
			"run", "-id", id, "-task-queue", e.queue, "-input", path}, out, out)
	}()
	return out, code
}

// A starter whose run no worker can take says why within seconds, and the
// run goes on once the operator does what it says. First no worker polls
// the task queue at all; then a build (v1) polls but the deployment has no
// current version, so new runs wait for unversioned workers; v1 is made
// current with the command the starter names, and the run ends. Then v1's
// worker is replaced by build v2's, which nobody makes current: the next
// run waits for v1, and the starter names v2's set-current-version
// command; run as given, the run ends on v2.
func TestStarterSaysWhyARunWaits(t *testing.T) {
	e := newEnv(t)
	said := func(out *logbuf.Buffer, what string) bool { return strings.Contains(out.String(), what) }

	began := time.Now()
	out, code := e.starter("waits-1")
	e.waitFor("the starter saying no worker polls", reachTimeout, func() bool { return said(out, "no worker polls "+e.queue) })
	e.logf("said after %v", time.Since(began).Round(100*time.Millisecond))

	v1 := e.startWorker("v1", "-build-id", "v1")
	setV1 := "temporal worker deployment set-current-version --deployment-name " + workflows.DeploymentName + " --build-id v1"
	began = time.Now()
	e.waitFor("the starter naming v1's set-current-version", reachTimeout, func() bool { return said(out, setV1) })
	e.logf("said after %v the worker was ready", time.Since(began).Round(100*time.Millisecond))
	require.Contains(t, out.String(), "the run waits for an unversioned worker")
	e.cli("worker", "deployment", "set-current-version", "--deployment-name", workflows.DeploymentName, "--build-id", "v1", "--yes")
	select {
	case c := <-code:
		require.Equal(t, 0, c, out.String())
	case <-time.After(runTimeout):
		t.Fatalf("the starter did not end:\n%s", out.String())
	}
	require.Contains(t, out.String(), "waits-1: a worker took it.")
	require.Contains(t, out.String(), "Run ended: stopReason stop")

	e.killWorker(v1, "replaced by v2, which is not made current")
	e.startWorker("v2", "-build-id", "v2")
	out, code = e.starter("waits-2")
	setV2 := "temporal worker deployment set-current-version --deployment-name " + workflows.DeploymentName + " --build-id v2"
	began = time.Now()
	e.waitFor("the starter naming v2's set-current-version", reachTimeout, func() bool { return said(out, setV2) })
	e.logf("said after %v", time.Since(began).Round(100*time.Millisecond))
	require.Contains(t, out.String(), "the run waits for a worker of build v1, the current version of deployment "+workflows.DeploymentName)
	require.NotContains(t, out.String(), "--build-id v1", "v1 is current already")
	e.cli("worker", "deployment", "set-current-version", "--deployment-name", workflows.DeploymentName, "--build-id", "v2", "--yes")
	select {
	case c := <-code:
		require.Equal(t, 0, c, out.String())
	case <-time.After(runTimeout):
		t.Fatalf("the starter did not end:\n%s", out.String())
	}
	require.Contains(t, out.String(), "Run ended: stopReason stop")
	require.Equal(t, []string{"v2"}, buildsOf(e.history("waits-2")), "the run ran on v2")
	t.Logf("starter output of the second run:\n%s", out.String())
}

package conformance_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/conformance"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
)

// TestConformanceTypeScript plays the scenarios of testdata/typescript,
// whose remote tools and hooks (remoteHooks) are served by a Temporal
// worker in TypeScript (conformance/typescript), and requires pi's trace
// for each, made by the reference runner, to which those tools are
// ordinary tools and the hooks its beforeToolCall and afterToolCall. Each
// scenario runs twice: with the TypeScript worker, and with the Go remote
// worker, which must give the same trace (the contract, not the SDK's
// language, decides it). The TypeScript half skips where node is not
// installed, as the other Node.js tests do.
func TestConformanceTypeScript(t *testing.T) {
	c := testenv.Client(t)
	dir := filepath.Join("testdata", "typescript")
	cases, err := conformance.Cases(dir)
	require.NoError(t, err)

	node, nodeErr := exec.LookPath("node")
	ts := conformance.TypeScriptWorker{Node: node, Dir: "typescript", Address: testenv.HostPort()}
	if nodeErr == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		require.NoError(t, ts.Build(ctx))
		cancel()
	}
	for _, cs := range cases {
		for _, lang := range []string{"typescript", "go"} {
			t.Run(lang+"/"+cs.Name, func(t *testing.T) {
				remote := conformance.StartGoRemoteWorker
				if lang == "typescript" {
					if nodeErr != nil {
						t.Skip("node is not on PATH: the TypeScript worker needs Node.js (Debian: apt-get install nodejs npm)")
					}
					w := ts
					w.Scenario = filepath.Join(dir, "scenarios", cs.Name+".json")
					remote = w.Start
				}
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				res, err := conformance.RunOn(ctx, c, cs.Scenario, remote)
				require.NoError(t, err)
				got, err := conformance.Canonical(res.Trace)
				require.NoError(t, err)
				if d := conformance.Diff(cs.Want, got); d != "" {
					t.Fatalf("trace of %s with the %s remote worker (workflow %s): %s", cs.Name, lang, res.WorkflowID, d)
				}
			})
		}
	}
}

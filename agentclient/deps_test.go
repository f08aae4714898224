package agentclient_test

import (
	"os/exec"
	"strings"
	"testing"
)

// maxClientDeps bounds the packages outside Go's standard library that a
// client of agentclient compiles in. The Temporal SDK's client is 208 of
// them, the content store (with the S3 client, since a client reads
// content wherever the worker put it) most of the rest; 248 when the bound
// was set. The standard library is left out of the count: the SDK's
// client alone needs 214 of its packages, which no choice of ours changes.
const maxClientDeps = 250

// The worker's packages and what they pull in, which a client must not:
// provider SDKs, MCP, the tool sandbox (Landlock, seccomp), TypeBox's
// validator (regexp2), the tools, and the workflows and activities
// themselves (the contract is agentapi).
var workerOnly = []string{
	"github.com/anthropics/",
	"github.com/openai/",
	"github.com/modelcontextprotocol/",
	"github.com/landlock-lsm/",
	"github.com/dlclark/regexp2",
	"github.com/durable-agents/agentloop/llm",
	"github.com/durable-agents/agentloop/tools",
	"github.com/durable-agents/agentloop/hooks",
	"github.com/durable-agents/agentloop/compaction",
	"github.com/durable-agents/agentloop/internal/sandbox",
	"github.com/durable-agents/agentloop/internal/typebox",
	"github.com/durable-agents/agentloop/activities",
	"github.com/durable-agents/agentloop/workflows",
	"github.com/durable-agents/agentloop/telemetry",
}

// A program that talks to the workflows through agentclient builds without
// the worker: go list -deps finds no worker package in what it compiles,
// and no more packages than maxClientDeps beyond the standard library.
func TestClientBuildsWithoutTheWorker(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var deps []string
	for _, p := range strings.Split(string(out), "\n") {
		if p != "" {
			deps = append(deps, p)
		}
	}
	for _, p := range deps {
		for _, w := range workerOnly {
			if p == w || strings.HasPrefix(p, strings.TrimSuffix(w, "/")+"/") {
				t.Errorf("agentclient compiles in %s, a package of the worker (%s)", p, w)
			}
		}
	}
	if len(deps) > maxClientDeps {
		t.Errorf("agentclient compiles in %d packages beyond the standard library, more than %d:\n%s", len(deps), maxClientDeps, strings.Join(deps, "\n"))
	}
	t.Logf("%d packages beyond the standard library", len(deps))
}

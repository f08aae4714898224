package agentloop_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/durable-agents/agentloop"

// layers are the module's floors, lowest first. A package may import
// packages of its own floor and of the floors below, never one above: the
// worker's pieces stay out of the libraries, and the harnesses out of the
// product. A path ending in /... stands for the packages under it. Commands
// (package main) are the top floor, whatever their path. Test files may
// import upwards (a workflow test starts a dev server from a harness), so
// only the packages' own imports count.
var layers = []struct {
	name     string
	packages []string
}{
	// Leaf libraries: pi's domain types, payload encryption, the
	// repository's embedded config (the root package), and internal/'s
	// libraries, which know nothing of agents.
	{"leaves", []string{"", "agent", "codec", "internal/jsjson", "internal/gobin", "internal/logging",
		"internal/secretenv", "internal/sandbox/...", "internal/typebox", "internal/temporalenv"}},
	// The contract between the workflows and their clients: names and
	// shapes, on package agent alone.
	{"contract", []string{"agentapi"}},
	// What the worker runs inside its activities and what clients read,
	// without Temporal's workflow and activity code: models, tools, hooks,
	// the content store, compaction, the demo's scripted model.
	{"domain", []string{"llm", "hooks", "store", "compaction", "tools", "tools/journal", "tools/mcptools", "demo"}},
	// The client library: the contract, the store and Temporal's client,
	// never the worker below it in this list (agentclient's deps_test.go
	// also keeps the domain's heavy packages out).
	{"client", []string{"agentclient"}},
	// The worker's Temporal code: activities, workflows, their telemetry.
	{"worker", []string{"activities", "workflows", "telemetry"}},
	// Worker and client put together: agentworker assembles a worker,
	// conformance runs scenarios through both, the starter's commands drive runs and run the demo in-process.
	{"assemblies", []string{"agentworker", "conformance", "starter/cli"}},
	// Test and dev harnesses: servers, stacks, fleets, crash and soak
	// tests. Nothing below imports them but tests.
	{"harnesses", []string{"internal/harness/..."}},
	// Commands, the benchmarks and the examples' tests: whatever they need.
	{"commands", []string{"bench", "examples"}},
}

// floor is the index in layers of package path p (relative to the module),
// or -1 when no floor lists it.
func floor(p string) int {
	for i, l := range layers {
		for _, q := range l.packages {
			dir, tree := strings.CutSuffix(q, "/...")
			if p == dir || tree && strings.HasPrefix(p, dir+"/") {
				return i
			}
		}
	}
	return -1
}

// No package imports one of a higher floor, and every package has a floor.
func TestNoImportGoesUpAFloor(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Name}}{{range .Imports}} {{.}}{{end}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return "", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	top := len(layers) - 1
	packages := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkg, _ := rel(fields[0])
		from := top
		if fields[1] != "main" {
			from = floor(pkg)
		}
		if from < 0 {
			t.Errorf("%s is on no floor: add it to layers", fields[0])
			continue
		}
		packages++
		for _, imp := range fields[2:] {
			r, ok := rel(imp)
			if !ok {
				continue
			}
			if to := floor(r); to > from {
				t.Errorf("%s (%s) imports %s (%s), a higher floor", fields[0], layers[from].name, imp, layers[to].name)
			}
		}
	}
	if packages == 0 {
		t.Fatal("go list listed no package")
	}
}

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/sandbox"
	"github.com/durable-agents/agentloop/tools"
)

type mode struct {
	name    string
	tool    *tools.BashTool
	network bool
	// scope, when set, is a run that has a saved output, which its
	// commands see read-only: one more bind mount under bwrap.
	scope string
	took  []time.Duration
}

func main() {
	n := flag.Int("n", 200, "calls per mode")
	command := flag.String("command", "true", "the command each call runs")
	flag.Parse()
	ws, err := os.MkdirTemp("", "sandboxbench-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(ws)

	var modes []*mode
	for _, m := range []sandbox.Mode{sandbox.None, sandbox.Bwrap, sandbox.Landlock} {
		sb, err := sandbox.New(sandbox.Config{Mode: m, Hide: sandbox.DefaultHide(os.Getenv)})
		if err != nil {
			fmt.Printf("%-18s unavailable: %v\n", m, err)
			continue
		}
		tool := tools.NewBashTool(tools.BashOptions{Sandbox: sb, OutputDir: filepath.Join(ws, ".outputs")})
		modes = append(modes, &mode{name: string(m), tool: tool})
		if m == sandbox.Bwrap {
			modes = append(modes, &mode{name: "bwrap network on", tool: tool, network: true},
				&mode{name: "bwrap saved output", tool: tool, scope: "bench-saved"})
		}
	}
	for _, m := range modes {
		if m.scope != "" {
			m.call(ws, "seq 1 3000") // over the inline cap: the run's output is saved
		}
		m.call(ws, *command) // warm up: page cache, the proxy
	}
	for i := 0; i < *n; i++ {
		for _, m := range modes {
			m.took = append(m.took, m.call(ws, *command))
		}
	}

	fmt.Printf("%d calls of %q per mode through tools.BashTool.Execute\n", *n, *command)
	fmt.Printf("%-18s %10s %10s %10s %14s %14s\n", "mode", "median", "p90", "p99", "added median", "added p99")
	base := modes[0]
	for _, m := range modes {
		slices.Sort(m.took)
		fmt.Printf("%-18s %10s %10s %10s %14s %14s\n", m.name, ms(q(m.took, 0.5)), ms(q(m.took, 0.9)), ms(q(m.took, 0.99)),
			ms(q(m.took, 0.5)-q(base.took, 0.5)), ms(q(m.took, 0.99)-q(base.took, 0.99)))
	}
}

func (m *mode) call(ws, command string) time.Duration {
	call := tools.Call{ID: "bench", Name: tools.BashToolName, Args: map[string]any{"command": command}, Workspace: ws, Scope: m.scope}
	if m.network {
		call.Sandbox = &agent.SandboxConfig{Network: "on"}
	}
	start := time.Now()
	if _, err := m.tool.Execute(context.Background(), call); err != nil {
		fatal(fmt.Errorf("%s: %v", m.name, err))
	}
	return time.Since(start)
}

func q(sorted []time.Duration, p float64) time.Duration {
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "sandboxbench:", err)
	os.Exit(1)
}

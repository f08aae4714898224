package main

import (
	"context"
	"errors"
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
	ws      string
	network bool
	// scope, when set, is a run that has a saved output, which its
	// commands see read-only: one more bind mount under bwrap (none for
	// commands of another user, a root worker's default).
	scope string
	took  []time.Duration
}

func main() {
	n := flag.Int("n", 200, "calls per mode")
	command := flag.String("command", "true", "the command each call runs")
	bridge := flag.String("bridge", "", "another agentloop-netbridge binary to measure network on with, beside the one found")
	flag.Parse()
	ws, err := os.MkdirTemp("", "sandboxbench-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(ws)

	// As root, bwrap's commands run as sandbox.DefaultUser on an idmapped
	// workspace (ws, root's); "-sandbox-user" runs them as that user on a
	// workspace of its own instead, which Landlock requires of root.
	userWS, err := os.MkdirTemp("", "sandboxbench-user-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(userWS)
	root := os.Geteuid() == 0
	if root {
		if err := errors.Join(os.Chmod(userWS, 0o755), os.Chown(userWS, int(sandbox.DefaultUser.Uid), int(sandbox.DefaultUser.Gid))); err != nil {
			fatal(err)
		}
	}
	var modes []*mode
	add := func(name string, cfg sandbox.Config, ws string, network bool) {
		cfg.Hide = sandbox.DefaultHide(os.Getenv)
		sb, err := sandbox.New(cfg)
		if err != nil {
			fmt.Printf("%-22s unavailable: %v\n", name, err)
			return
		}
		tool := tools.NewBashTool(tools.BashOptions{Sandbox: sb, OutputDir: filepath.Join(ws, ".outputs")})
		modes = append(modes, &mode{name: name, tool: tool, ws: ws})
		if network {
			modes = append(modes, &mode{name: name + " network on", tool: tool, ws: ws, network: true},
				&mode{name: name + " saved output", tool: tool, ws: ws, scope: "bench-saved"})
		}
	}
	add("none", sandbox.Config{Mode: sandbox.None}, ws, false)
	add("bwrap", sandbox.Config{Mode: sandbox.Bwrap}, ws, true)
	if *bridge != "" {
		// Only its network-on mode: the rest is the same sandbox again.
		add("bwrap -bridge", sandbox.Config{Mode: sandbox.Bwrap, Bridge: *bridge}, ws, true)
		modes = slices.DeleteFunc(modes, func(m *mode) bool {
			return m.name == "bwrap -bridge" || m.name == "bwrap -bridge saved output"
		})
	}
	if root {
		add("bwrap -sandbox-user", sandbox.Config{Mode: sandbox.Bwrap, RunAs: &sandbox.DefaultUser}, userWS, false)
		add("landlock -sandbox-user", sandbox.Config{Mode: sandbox.Landlock, RunAs: &sandbox.DefaultUser}, userWS, false)
	} else {
		add("landlock", sandbox.Config{Mode: sandbox.Landlock}, ws, false)
	}
	for _, m := range modes {
		if m.scope != "" {
			m.call("seq 1 3000") // over the inline cap: the run's output is saved
		}
		m.call(*command) // warm up: page cache, the proxy
	}
	for i := 0; i < *n; i++ {
		for _, m := range modes {
			m.took = append(m.took, m.call(*command))
		}
	}

	fmt.Printf("%d calls of %q per mode through tools.BashTool.Execute\n", *n, *command)
	fmt.Printf("%-28s %10s %10s %10s %14s %14s\n", "mode", "median", "p90", "p99", "added median", "added p99")
	base := modes[0]
	for _, m := range modes {
		slices.Sort(m.took)
		fmt.Printf("%-28s %10s %10s %10s %14s %14s\n", m.name, ms(q(m.took, 0.5)), ms(q(m.took, 0.9)), ms(q(m.took, 0.99)),
			ms(q(m.took, 0.5)-q(base.took, 0.5)), ms(q(m.took, 0.99)-q(base.took, 0.99)))
	}
}

func (m *mode) call(command string) time.Duration {
	call := tools.Call{ID: "bench", Name: tools.BashToolName, Args: map[string]any{"command": command}, Workspace: m.ws, Scope: m.scope}
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

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// piVersion is the pi-agent-core release bench/pi pins.
const piVersion = "0.73.1"

// piRunner runs bench/pi/loop.mjs, pi's own agent loop, one process per run.
type piRunner struct {
	node   string
	dir    string // bench/pi
	warmup int
}

// piRun is what loop.mjs prints for one run, plus the process's wall time
// as seen from here.
type piRun struct {
	StartupMs  float64 `json:"startupMs"`
	ColdMs     float64 `json:"coldMs"`
	Ms         float64 `json:"ms"`
	CPUMs      float64 `json:"cpuMs"`
	Turns      int     `json:"turns"`
	ToolCalls  int     `json:"toolCalls"`
	Events     int     `json:"events"`
	StopReason string  `json:"stopReason"`
	process    time.Duration
}

func (r piRun) loop() time.Duration { return msDuration(r.Ms) }

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// findPiDir finds bench/pi: from the working directory up, else beside this
// source file (go run keeps its path).
func findPiDir() (string, error) {
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			p := filepath.Join(dir, "bench", "pi")
			if _, err := os.Stat(filepath.Join(p, "package.json")); err == nil {
				return p, nil
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		p := filepath.Join(filepath.Dir(file), "pi")
		if _, err := os.Stat(filepath.Join(p, "package.json")); err == nil {
			return p, nil
		}
	}
	return "", errors.New("bench/pi not found: run from the repository")
}

// newPiRunner checks node and installs bench/pi's locked dependencies with
// npm ci when node_modules is missing.
func newPiRunner(ctx context.Context, node string, warmup int) (*piRunner, string, error) {
	dir, err := findPiDir()
	if err != nil {
		return nil, "", err
	}
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return nil, "", fmt.Errorf("node: %w (install Node.js 20 or later)", err)
	}
	nodeVersion := strings.TrimSpace(string(out))
	installed := filepath.Join(dir, "node_modules", "@mariozechner", "pi-agent-core", "package.json")
	if _, err := os.Stat(installed); err != nil {
		fmt.Fprintf(os.Stderr, "bench: npm ci --prefix %s\n", dir)
		cmd := exec.CommandContext(ctx, "npm", "ci", "--prefix", dir, "--no-audit", "--no-fund")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, "", fmt.Errorf("npm ci --prefix %s: %w", dir, err)
		}
	}
	b, err := os.ReadFile(installed)
	if err != nil {
		return nil, "", err
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		return nil, "", err
	}
	if pkg.Version != piVersion {
		return nil, "", fmt.Errorf("%s has pi-agent-core %s, want %s: remove its node_modules", dir, pkg.Version, piVersion)
	}
	return &piRunner{node: node, dir: dir, warmup: warmup}, fmt.Sprintf("node %s, pi-agent-core %s", nodeVersion, pkg.Version), nil
}

// run plays a scenario through pi in a fresh node process.
func (p *piRunner) run(ctx context.Context, s benchScenario) (piRun, error) {
	cmd := exec.CommandContext(ctx, p.node, filepath.Join(p.dir, "loop.mjs"), "--warmup", fmt.Sprint(p.warmup))
	cmd.Dir = p.dir
	cmd.Stdin = bytes.NewReader(s.raw)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		return piRun{}, fmt.Errorf("pi %s: %w: %s", s.Name, err, stderr.String())
	}
	var r piRun
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &r); err != nil {
		return piRun{}, fmt.Errorf("pi %s printed %q: %w", s.Name, stdout.String(), err)
	}
	r.process = wall
	if r.Turns != s.turns || r.ToolCalls != s.calls {
		return r, fmt.Errorf("pi %s: %d turns and %d tool calls, the scenario has %d and %d", s.Name, r.Turns, r.ToolCalls, s.turns, s.calls)
	}
	return r, nil
}

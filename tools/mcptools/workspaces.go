package mcptools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/durable-agents/agentloop/internal/sandbox"
)

// A sandboxed stdio server runs as bash does: in the worker's sandbox,
// with the run's workspace as its only writable directory. Runs of
// several workspaces share a worker, so each workspace gets a process of
// its own, started at its first call and stopped after IdleTimeout
// without one. The configured server lists the tools once, from a
// process in an empty directory of its own that stops (and is removed)
// as soon as it has.

// sandbox is the sandbox stdio servers run in, set up on first use.
func (m *Manager) sandbox() (*sandbox.Sandbox, error) {
	m.sbOnce.Do(func() {
		m.sb = m.opts.Sandbox
		if m.sb == nil {
			m.sb, m.sbErr = sandbox.Default()
		}
	})
	return m.sb, m.sbErr
}

// unsandboxedWhy says why a stdio server starts unsandboxed, for the
// warning.
func (m *Manager) unsandboxedWhy(cfg ServerConfig) string {
	if cfg.Sandbox == "none" {
		return `its config says "sandbox": "none"`
	}
	return "the worker runs with -sandbox=none"
}

// sandboxed reports whether the server's processes run in the sandbox:
// a command server that did not opt out, on a worker whose sandbox is on.
// A sandbox that cannot be set up counts as on: starting the server then
// fails with its error rather than running unsandboxed.
func (s *server) sandboxed() bool {
	if s.cfg.Command == "" || s.cfg.Sandbox == "none" {
		return false
	}
	sb, err := s.m.sandbox()
	return err != nil || sb.Mode() != sandbox.None
}

// configured is the server of the config an instance belongs to.
func (s *server) configured() *server {
	if s.parent != nil {
		return s.parent
	}
	return s
}

// listingDir is an empty directory to list the tools in, writable by the
// sandbox's user.
func listingDir(sb *sandbox.Sandbox) (string, error) {
	dir, err := os.MkdirTemp("", "agentloop-mcp-list-")
	if err != nil {
		return "", err
	}
	if runAs := sb.Config().RunAs; runAs != nil {
		if err := os.Chown(dir, int(runAs.Uid), int(runAs.Gid)); err != nil {
			_ = os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// dialSandboxed starts the server in the sandbox, in its workspace (the
// listing directory for the configured server), with the environment the
// sandbox gives every command plus the config's env, and the network
// only when the config says "on".
func (s *server) dialSandboxed(ctx context.Context, client *mcp.Client, stderr *tailBuffer) (*mcp.ClientSession, *proc, error) {
	sb, err := s.m.sandbox()
	if err != nil {
		return nil, nil, err
	}
	ws, cleanup := s.ws, func() {}
	if s.parent == nil {
		if ws, err = listingDir(sb); err != nil {
			return nil, nil, err
		}
		cleanup = func() { _ = os.RemoveAll(ws) }
	}
	args := []string{s.cfg.Command}
	for _, a := range s.cfg.Args {
		args = append(args, strings.ReplaceAll(a, WorkspaceRef, ws))
	}
	env := map[string]string{}
	for k, v := range s.cfg.Env {
		env[k] = strings.ReplaceAll(v, WorkspaceRef, ws)
	}
	p, err := sb.StartPiped(sandbox.Spec{
		Args:      args,
		Dir:       ws,
		Env:       env,
		Network:   s.cfg.Network == "on",
		ReadPaths: s.cfg.ReadPaths,
		Stderr:    stderr,
	})
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	pr := &proc{pid: p.Group, stop: func() {
		p.Kill()
		_, _ = p.Wait()
		cleanup()
	}}
	sess, err := client.Connect(ctx, &mcp.IOTransport{Reader: p.Stdout, Writer: p.Stdin}, nil)
	if err != nil {
		_ = p.Stdin.Close()
		_ = p.Stdout.Close()
		pr.kill()
		return nil, nil, err
	}
	return sess, pr, nil
}

// instance returns the server for calls in workspace ws, a new one
// (started at its first session) when there is none; release ends the
// call.
func (s *server) instance(ws string) (*server, func(), error) {
	if ws == "" {
		return nil, nil, fmt.Errorf("MCP server %s runs sandboxed in the run's workspace, and this call has none", s.name)
	}
	ws, err := filepath.Abs(ws)
	if err != nil {
		return nil, nil, err
	}
	s.instMu.Lock()
	defer s.instMu.Unlock()
	in := s.insts[ws]
	if in == nil {
		in = &server{name: s.name, cfg: s.cfg, m: s.m, ws: ws, parent: s}
		s.insts[ws] = in
	}
	in.busy++
	return in, func() {
		s.instMu.Lock()
		defer s.instMu.Unlock()
		in.busy--
		in.used = time.Now()
	}, nil
}

// closeInstances stops the workspace processes idle for at least idle
// (all of them with force) and forgets them; a later call starts anew.
func (s *server) closeInstances(idle time.Duration, force bool) {
	var stop []*server
	s.instMu.Lock()
	for ws, in := range s.insts {
		if force || in.busy == 0 && time.Since(in.used) >= idle {
			stop = append(stop, in)
			delete(s.insts, ws)
		}
	}
	s.instMu.Unlock()
	for _, in := range stop {
		in.close()
		if !force {
			s.m.opts.Log("MCP server stopped after being idle", "server", s.name, "workspace", in.ws, "idle", idle.String())
		}
	}
}

// stopIdle stops idle workspace processes until Close.
func (m *Manager) stopIdle() {
	every := min(max(m.opts.IdleTimeout/4, time.Second), time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-m.done:
			return
		case <-t.C:
			for _, s := range m.servers {
				s.closeInstances(m.opts.IdleTimeout, false)
			}
		}
	}
}

// Workspaces returns the workspaces in which a sandboxed server has a
// process running, sorted.
func (m *Manager) Workspaces(server string) []string {
	s := m.servers[server]
	if s == nil {
		return nil
	}
	s.instMu.Lock()
	defer s.instMu.Unlock()
	var out []string
	for ws, in := range s.insts {
		in.mu.Lock()
		if in.sess != nil {
			out = append(out, ws)
		}
		in.mu.Unlock()
	}
	slices.Sort(out)
	return out
}

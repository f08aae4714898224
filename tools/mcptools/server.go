package mcptools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/durable-agents/agentloop/tools"
)

// server is one configured MCP server and its current connection. A
// sandboxed stdio server also has one instance per run workspace
// (workspaces.go): a server of its own, whose process runs in that
// workspace; the configured one only lists the tools.
type server struct {
	name string
	cfg  ServerConfig
	m    *Manager
	// ws is the workspace an instance's process runs in; parent is the
	// configured server it belongs to. Both are unset on that one.
	ws     string
	parent *server

	mu         sync.Mutex
	sess       *mcp.ClientSession
	proc       *proc
	stderr     *tailBuffer
	connecting chan struct{} // closed when the attempt in flight ends
	listed     bool
	tools      map[string]tools.Tool // by namespaced name, kept across reconnects
	order      []string
	lastErr    error
	lastFail   time.Time
	wait       time.Duration               // after lastFail, before the next attempt
	retry      *backoff.ExponentialBackOff // the waits of failures in a row; nil after a success

	progress sync.Map // progress token -> func(*mcp.ProgressNotificationParams)

	instMu sync.Mutex
	insts  map[string]*server // by workspace, on the configured server
	busy   int                // calls in flight, on an instance (instMu)
	used   time.Time          // when the last call ended (instMu)
}

// proc is a running stdio server.
type proc struct {
	pid  int    // its process group
	stop func() // kills the group and reaps what it must
	once sync.Once
}

// kill stops the server once: a second SIGKILL to a reaped group could
// reach another that took its id.
func (p *proc) kill() {
	if p != nil {
		p.once.Do(p.stop)
	}
}

func (s *server) isListed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listed
}

func (s *server) tool(name string) (tools.Tool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tools[name]
	return t, ok
}

func (s *server) list() []tools.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]tools.Tool, 0, len(s.order))
	for _, n := range s.order {
		out = append(out, s.tools[n])
	}
	return out
}

// session returns the live connection, connecting first when there is
// none. One attempt runs at a time; callers wait for it within ctx. After
// a failure the next attempt waits out a backoff (1 s doubling to 30 s),
// so a server that cannot start is not started at every call.
func (s *server) session(ctx context.Context) (*mcp.ClientSession, error) {
	s.mu.Lock()
	if s.sess != nil {
		defer s.mu.Unlock()
		return s.sess, nil
	}
	if s.connecting == nil {
		if wait := s.wait - time.Since(s.lastFail); s.lastErr != nil && wait > 0 {
			err := s.lastErr
			s.mu.Unlock()
			return nil, fmt.Errorf("%w (next attempt in %s)", err, wait.Round(100*time.Millisecond))
		}
		s.connecting = make(chan struct{})
		go s.connect(s.connecting)
	}
	done := s.connecting
	s.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("connecting: %w", context.Cause(ctx))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil {
		return nil, s.lastErr
	}
	return s.sess, nil
}

// connect makes one connection attempt and lists the server's tools. It
// runs detached from the caller, within the connect timeout, so that a
// caller that gives up does not break the attempt for the others.
func (s *server) connect(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), s.m.opts.ConnectTimeout)
	defer cancel()
	start := time.Now()
	sess, pr, stderr, err := s.dial(ctx)
	var listed []*mcp.Tool
	if err == nil && s.parent == nil {
		listed, err = listTools(ctx, sess)
		if err != nil {
			_ = sess.Close()
			pr.kill()
		}
	}
	s.mu.Lock()
	defer func() {
		s.connecting = nil
		s.mu.Unlock()
		close(done)
	}()
	if err != nil {
		err = s.describe(err, stderr)
		s.lastErr, s.lastFail = err, time.Now()
		if s.retry == nil {
			// No jitter: these are one worker's attempts at one server.
			s.retry = &backoff.ExponentialBackOff{InitialInterval: time.Second, Multiplier: 2, MaxInterval: maxBackoff}
		}
		s.wait = s.retry.NextBackOff()
		s.m.opts.Log("MCP server unavailable", "server", s.name, "reason", err.Error())
		return
	}
	took := time.Since(start).Round(time.Millisecond).String()
	s.lastErr, s.retry, s.wait = nil, nil, 0
	switch {
	case s.parent != nil:
		s.m.opts.Log("MCP server started", "server", s.name, "workspace", s.ws, "via", s.cfg.Describe(), "took", took)
	case s.sandboxed():
		// The listing process has done its work: calls run in their
		// workspace's own process.
		go func() {
			_ = sess.Close()
			pr.kill()
		}()
		s.setTools(listed)
		s.m.opts.Log("MCP server listed its tools", "server", s.name, "via", s.cfg.Describe(), "tools", len(s.order), "took", took)
		return
	default:
		s.setTools(listed)
		s.m.opts.Log("MCP server connected", "server", s.name, "via", s.cfg.Describe(), "tools", len(s.order), "took", took)
	}
	s.sess, s.proc, s.stderr = sess, pr, stderr
	go s.watch(sess, pr, stderr)
}

// dial starts a stdio server or opens a streamable-HTTP session.
func (s *server) dial(ctx context.Context) (*mcp.ClientSession, *proc, *tailBuffer, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "agentloop", Version: "1"}, s.clientOptions())
	if s.cfg.URL != "" {
		hc := &http.Client{Transport: headerTransport{headers: s.cfg.Headers, base: http.DefaultTransport}}
		t := &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc, MaxRetries: 2}
		sess, err := client.Connect(ctx, t, nil)
		return sess, nil, nil, err
	}
	stderr := &tailBuffer{max: 4096, redact: s.cfg.secrets}
	if s.sandboxed() {
		sess, pr, err := s.dialSandboxed(ctx, client, stderr)
		return sess, pr, stderr, err
	}
	s.m.opts.Warn("MCP server starts unsandboxed, with the worker's rights, files and network", "server", s.name,
		"via", s.cfg.Describe(), "why", s.m.unsandboxedWhy(s.cfg))
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	cmd.Dir = s.cfg.Cwd
	cmd.Env = s.environ()
	cmd.Stderr = stderr
	// Its own process group, so that stopping it stops what it started
	// (npx runs the server as a child); it dies with the worker.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	sess, stopped, err := connectOnOwnThread(ctx, client, cmd)
	if err != nil {
		killGroup(cmd)
		if cmd.Process != nil {
			_ = cmd.Wait()
		}
		return nil, nil, stderr, err
	}
	return sess, &proc{pid: cmd.Process.Pid, stop: func() { killGroup(cmd); close(stopped) }}, stderr, nil
}

// connectOnOwnThread starts an unsandboxed server from a goroutine locked
// to an OS thread of its own, which lives until stopped is closed. The
// kernel sends the parent-death signal when the thread that forked the
// process ends, not the worker, and the Go runtime ends a thread whenever
// a goroutine that locked it returns, as every sandboxed command's does
// (sandbox.Start): started from any thread, the server died with some
// bash call (TestUnsandboxedServerOutlivesTheWorkersCommands).
func connectOnOwnThread(ctx context.Context, client *mcp.Client, cmd *exec.Cmd) (*mcp.ClientSession, chan struct{}, error) {
	type result struct {
		sess *mcp.ClientSession
		err  error
	}
	res, stopped := make(chan result, 1), make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends once the server is stopped
		sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
		res <- result{sess, err}
		if err == nil {
			<-stopped
		}
	}()
	r := <-res
	return r.sess, stopped, r.err
}

// environ is a stdio server's whole environment: InheritedEnv from the
// worker, then the config's env. Nothing else of the worker's reaches it.
func (s *server) environ() []string {
	var env []string
	for _, k := range InheritedEnv {
		if _, set := s.cfg.Env[k]; !set {
			if v := s.m.opts.Getenv(k); v != "" {
				env = append(env, k+"="+v)
			}
		}
	}
	for k, v := range s.cfg.Env {
		env = append(env, k+"="+v)
	}
	return env
}

// watch waits for a connection to end (the server exited or the HTTP
// session broke) and forgets it, so that the next use reconnects.
func (s *server) watch(sess *mcp.ClientSession, pr *proc, stderr *tailBuffer) {
	err := sess.Wait()
	pr.kill()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess != sess {
		return
	}
	if err == nil {
		err = errors.New("connection closed")
	}
	s.sess, s.proc = nil, nil
	s.lastErr, s.lastFail = s.describe(err, stderr), time.Now()
	s.m.opts.Log("MCP server connection lost; the next call reconnects", "server", s.name, "reason", s.lastErr.Error())
}

// drop ends a connection that failed a call, unless it was replaced.
func (s *server) drop(sess *mcp.ClientSession) {
	s.mu.Lock()
	pr := s.proc
	if s.sess != sess {
		s.mu.Unlock()
		return
	}
	s.sess, s.proc = nil, nil
	s.mu.Unlock()
	_ = sess.Close()
	pr.kill()
}

func (s *server) close() {
	s.mu.Lock()
	sess, pr := s.sess, s.proc
	s.sess, s.proc = nil, nil
	s.lastErr = errors.New("closed")
	s.mu.Unlock()
	if sess != nil {
		_ = sess.Close()
	}
	pr.kill()
}

// relist reads the tools again after the server said they changed.
func (s *server) relist(sess *mcp.ClientSession) {
	ctx, cancel := context.WithTimeout(context.Background(), s.m.opts.ConnectTimeout)
	defer cancel()
	listed, err := listTools(ctx, sess)
	if err != nil {
		s.m.opts.Log("MCP server tool list changed but cannot be read", "server", s.name, "reason", err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setTools(listed)
}

func listTools(ctx context.Context, sess *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		out = append(out, t)
	}
	return out, nil
}

// setTools replaces the known tools; s.mu is held.
func (s *server) setTools(listed []*mcp.Tool) {
	s.tools, s.order, s.listed = map[string]tools.Tool{}, nil, true
	for _, t := range listed {
		name := ToolName(s.name, t.Name)
		if _, dup := s.tools[name]; dup {
			s.m.opts.Log("MCP tool skipped: its name collides with another after cleaning", "server", s.name, "tool", t.Name)
			continue
		}
		var tool tools.Tool = newTool(s, name, t)
		if s.m.opts.Wrap != nil {
			tool = s.m.opts.Wrap(tool)
		}
		s.tools[name] = tool
		s.order = append(s.order, name)
	}
}

// describe adds what a dead stdio server last wrote to its stderr.
func (s *server) describe(err error, stderr *tailBuffer) error {
	if stderr != nil {
		if tail := stderr.String(); tail != "" {
			return fmt.Errorf("%w; its stderr ends: %s", err, tail)
		}
	}
	return err
}

func killGroup(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

func isWireError(err error) bool {
	var w *jsonrpc.Error
	return errors.As(err, &w)
}

// tailBuffer keeps the last bytes a server wrote to its stderr, with the
// config's environment values redacted.
type tailBuffer struct {
	mu     sync.Mutex
	buf    []byte
	max    int
	redact []string
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*b.max {
		b.buf = slices.Clone(b.buf[len(b.buf)-b.max:])
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := string(b.buf)
	if len(s) > b.max {
		s = s[len(s)-b.max:]
	}
	for _, v := range b.redact {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	return strings.TrimSpace(s)
}

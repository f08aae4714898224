package mcptools

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/durable-agents/agentloop/internal/sandbox"
	"github.com/durable-agents/agentloop/tools"
)

// Defaults of Options and ServerConfig.
const (
	// DefaultConnectTimeout bounds starting a server (npx may install it
	// first) and listing its tools. It stays below the ResolveRun local
	// activity's one-minute timeout.
	DefaultConnectTimeout = 30 * time.Second
	// DefaultCallTimeout bounds one tool call, as the MCP TypeScript
	// SDK's default request timeout does.
	DefaultCallTimeout = 60 * time.Second
	// maxBackoff caps the wait between connection attempts to a server
	// that keeps failing.
	maxBackoff = 30 * time.Second
	// DefaultIdleTimeout is how long a sandboxed server's process for a
	// workspace lives on without a call.
	DefaultIdleTimeout = 10 * time.Minute
)

// InheritedEnv are the worker's variables a stdio server gets besides its
// config's env: the MCP TypeScript SDK's default list for POSIX.
var InheritedEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}

// Options configure a Manager.
type Options struct {
	// Wrap, when set, wraps each MCP tool; the worker journals the
	// single-attempt ones with it, as it does bash and edit.
	Wrap func(tools.Tool) tools.Tool
	// Log receives connection events (never env or header values).
	Log func(msg string, keysAndValues ...any)
	// ConnectTimeout bounds a connection attempt; default
	// DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Getenv reads InheritedEnv; default os.Getenv.
	Getenv func(string) string
	// Warn receives what an operator must hear of: a stdio server started
	// unsandboxed; default Log.
	Warn func(msg string, keysAndValues ...any)
	// Sandbox runs stdio servers, as it runs bash; nil means
	// sandbox.Default(). With its mode None they run unsandboxed.
	Sandbox *sandbox.Sandbox
	// IdleTimeout stops a workspace's server process after that long
	// without a call; default DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// Manager holds the worker's connections to its MCP servers and serves
// their tools to a tools.Registry (it is a tools.Source). Connections are
// made at Start and again whenever one is lost: a stdio server that exits
// is started again at the next use.
type Manager struct {
	opts    Options
	servers map[string]*server

	sbOnce sync.Once
	sb     *sandbox.Sandbox
	sbErr  error
	done   chan struct{}
	closed sync.Once
}

// New returns a manager for the config's servers; nothing starts before
// Start or the first use of a tool.
func New(c *Config, opts Options) *Manager {
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.Log == nil {
		opts.Log = func(string, ...any) {}
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Warn == nil {
		opts.Warn = opts.Log
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	m := &Manager{opts: opts, servers: map[string]*server{}, done: make(chan struct{})}
	for name, cfg := range c.Servers {
		m.servers[name] = &server{name: name, cfg: cfg, m: m, insts: map[string]*server{}}
	}
	go m.stopIdle()
	return m
}

// Servers returns the configured servers' names, sorted.
func (m *Manager) Servers() []string {
	return slices.Sorted(maps.Keys(m.servers))
}

// Start connects to every server at once and waits until each has
// listed its tools or failed (failures are logged and retried at use).
func (m *Manager) Start(ctx context.Context) {
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = s.session(ctx)
		}()
	}
	wg.Wait()
}

// Close ends every connection and stops every stdio server.
func (m *Manager) Close() {
	m.closed.Do(func() { close(m.done) })
	for _, s := range m.servers {
		s.close()
		s.closeInstances(0, true)
	}
}

// Lookup implements tools.Source.
func (m *Manager) Lookup(name string) (tools.Tool, bool) {
	s := m.serverOf(name)
	if s == nil {
		return nil, false
	}
	if !s.isListed() {
		ctx, cancel := context.WithTimeout(context.Background(), m.opts.ConnectTimeout)
		defer cancel()
		_, _ = s.session(ctx)
	}
	return s.tool(name)
}

// List implements tools.Source: every server's tools, connecting first to
// those never listed.
func (m *Manager) List() []tools.Tool {
	var out []tools.Tool
	for _, name := range m.Servers() {
		s := m.servers[name]
		if !s.isListed() {
			ctx, cancel := context.WithTimeout(context.Background(), m.opts.ConnectTimeout)
			_, _ = s.session(ctx)
			cancel()
		}
		out = append(out, s.list()...)
	}
	return out
}

// Unavailable implements tools.Source.
func (m *Manager) Unavailable(name string) error {
	s := m.serverOf(name)
	if s == nil || s.isListed() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastErr == nil {
		return fmt.Errorf("MCP server %s has not listed its tools yet", s.name)
	}
	return fmt.Errorf("MCP server %s is not available: %v", s.name, s.lastErr)
}

// Process returns the running process of a stdio server, or nil.
func (m *Manager) Process(server string) *os.Process {
	s := m.servers[server]
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.sess == nil {
		return nil
	}
	p, _ := os.FindProcess(s.proc.pid)
	return p
}

func (m *Manager) serverOf(toolName string) *server {
	name, _, ok := strings.Cut(toolName, Separator)
	if !ok {
		return nil
	}
	return m.servers[name]
}

// headerTransport adds the config's headers to every request to a
// streamable-HTTP server.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

// transportError reports whether a CallTool error means the connection is
// gone, rather than the server answering with a JSON-RPC error or the
// call running out of time.
func transportError(err error) bool {
	return !isWireError(err) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// clientOptions are the options of every connection's client: no roots,
// sampling or elicitation; progress and tool list changes are followed.
func (s *server) clientOptions() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			if f, ok := s.progress.Load(fmt.Sprint(r.Params.ProgressToken)); ok {
				f.(func(*mcp.ProgressNotificationParams))(r.Params)
			}
		},
		ToolListChangedHandler: func(ctx context.Context, r *mcp.ToolListChangedRequest) {
			go s.configured().relist(r.Session)
		},
	}
}

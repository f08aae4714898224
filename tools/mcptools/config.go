package mcptools

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Config is an MCP configuration file in the shape most MCP clients read:
//
//	{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"]},
//	                "docs": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}}
type Config struct {
	Servers map[string]ServerConfig `json:"mcpServers"`
}

// ServerConfig is one server: a command started on the worker host and
// spoken to over stdio, or a streamable-HTTP URL.
type ServerConfig struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Timeout bounds one tool call ("90s", "5m"); default DefaultCallTimeout.
	Timeout Duration `json:"timeout,omitempty"`
	// Disabled servers are skipped.
	Disabled bool `json:"disabled,omitempty"`
	// Sandbox "none" runs a command server unsandboxed, as the worker's
	// child with its rights, in Cwd; the worker warns at every start.
	// Otherwise it runs in the worker's sandbox, as bash does: one process
	// per run workspace, in it (README: MCP tools).
	Sandbox string `json:"sandbox,omitempty"`
	// Network "on" gives a sandboxed server the network through the
	// worker's proxy, as a run's "network": "on" gives bash; default off.
	Network string `json:"network,omitempty"`
	// ReadPaths are host paths a sandboxed server may read besides the
	// system directories (/usr, /etc, /opt...): its installation when it
	// lies elsewhere. Paths hidden from tools stay hidden.
	ReadPaths []string `json:"readPaths,omitempty"`

	// secrets are the values that came from the environment, redacted
	// from whatever the server writes to its stderr.
	secrets []string
}

// Duration is a time.Duration written as "90s" in JSON.
type Duration time.Duration

// UnmarshalJSON reads "90s" or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var secs float64
		if err := json.Unmarshal(b, &secs); err != nil {
			return fmt.Errorf("a duration is a string such as \"90s\" or a number of seconds")
		}
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Separator joins a server's name and its tool's name: "fs__read_file".
const Separator = "__"

// WorkspaceRef in a sandboxed server's args or env stands for the
// workspace its process runs in (each run workspace has its own); it is
// not read from the worker's environment.
const WorkspaceRef = "${AGENTLOOP_WORKSPACE}"

var (
	serverName = regexp.MustCompile(`^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$`)
	envRef     = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
)

// LoadConfig reads a configuration file and replaces every ${VAR} in
// args, env, url and headers with the variable's value from getenv
// (os.Getenv in the worker, before it unsets its own secrets). A variable
// that is not set is an error naming it; values are never logged.
func LoadConfig(path string, getenv func(string) string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(b, getenv)
}

// ParseConfig is LoadConfig on the file's content.
func ParseConfig(b []byte, getenv func(string) string) (*Config, error) {
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("MCP config: %w", err)
	}
	for name, s := range c.Servers {
		if s.Disabled {
			delete(c.Servers, name)
			continue
		}
		if err := s.check(name); err != nil {
			return nil, err
		}
		var missing []string
		expand := func(v string) string {
			return envRef.ReplaceAllStringFunc(v, func(ref string) string {
				if ref == WorkspaceRef {
					return ref // per process: workspaces.go
				}
				name := envRef.FindStringSubmatch(ref)[1]
				val := getenv(name)
				if val == "" {
					missing = append(missing, name)
				} else {
					s.secrets = append(s.secrets, val)
				}
				return val
			})
		}
		for i, a := range s.Args {
			s.Args[i] = expand(a)
		}
		s.Env = expandMap(s.Env, expand)
		s.Headers = expandMap(s.Headers, expand)
		s.URL = expand(s.URL)
		if len(missing) > 0 {
			slices.Sort(missing)
			return nil, fmt.Errorf("MCP server %s: environment variables %s are not set", name, strings.Join(slices.Compact(missing), ", "))
		}
		c.Servers[name] = s
	}
	return &c, nil
}

func expandMap(m map[string]string, expand func(string) string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = expand(v)
	}
	return out
}

func (s ServerConfig) check(name string) error {
	if !serverName.MatchString(name) || strings.Contains(name, Separator) {
		return fmt.Errorf("MCP server name %q: use letters, digits, '-' and single '_' (tools are named server%stool)", name, Separator)
	}
	if (s.Command == "") == (s.URL == "") {
		return fmt.Errorf("MCP server %s: give either command (stdio) or url (streamable HTTP)", name)
	}
	if s.URL != "" && (len(s.Args) > 0 || len(s.Env) > 0) {
		return fmt.Errorf("MCP server %s: args and env are for command servers; a url server takes headers", name)
	}
	if s.Command != "" && len(s.Headers) > 0 {
		return fmt.Errorf("MCP server %s: headers are for url servers; a command server takes env", name)
	}
	if s.URL != "" && (s.Sandbox != "" || s.Network != "" || len(s.ReadPaths) > 0) {
		return fmt.Errorf("MCP server %s: sandbox, network and readPaths are for command servers; a url server runs elsewhere", name)
	}
	switch {
	case s.Sandbox != "" && s.Sandbox != "none":
		return fmt.Errorf("MCP server %s: sandbox %q: leave it out (sandboxed) or give \"none\"", name, s.Sandbox)
	case s.Network != "" && s.Network != "on" && s.Network != "off":
		return fmt.Errorf("MCP server %s: network %q: want \"on\" or \"off\"", name, s.Network)
	case s.Sandbox == "none" && (s.Network != "" || len(s.ReadPaths) > 0):
		return fmt.Errorf("MCP server %s: network and readPaths are for sandboxed servers; with \"sandbox\": \"none\" it has the worker's rights", name)
	case s.Sandbox == "none" && s.namesWorkspace():
		return fmt.Errorf("MCP server %s: %s is the workspace of a sandboxed server's process; an unsandboxed server has one process for every run", name, WorkspaceRef)
	case s.Command != "" && s.Sandbox != "none" && s.Cwd != "":
		return fmt.Errorf("MCP server %s: cwd is for unsandboxed servers; a sandboxed server runs in the run's workspace", name)
	}
	if s.Timeout < 0 {
		return fmt.Errorf("MCP server %s: negative timeout", name)
	}
	return nil
}

func (s ServerConfig) namesWorkspace() bool {
	return slices.ContainsFunc(s.Args, func(a string) bool { return strings.Contains(a, WorkspaceRef) }) ||
		slices.ContainsFunc(slices.Collect(maps.Values(s.Env)), func(v string) bool { return strings.Contains(v, WorkspaceRef) })
}

// Describe says what a server is without its environment or headers,
// for logs.
func (s ServerConfig) Describe() string {
	if s.URL != "" {
		return "url " + redactURL(s.URL)
	}
	return "command " + s.Command
}

// redactURL drops credentials and the query from a URL, which may hold
// a token.
func redactURL(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	if at := strings.LastIndex(u, "@"); at >= 0 {
		if scheme := strings.Index(u, "://"); scheme >= 0 && scheme < at {
			u = u[:scheme+3] + u[at+1:]
		}
	}
	return u
}

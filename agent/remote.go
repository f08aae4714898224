package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// RemoteTool is a tool served by an activity on a task queue of one's own,
// by a worker in any Temporal SDK language. The loop does everything around
// it as for a built-in tool (lookup, validation with pi's coercion,
// approval, before and after hooks, pi's event order); only the execute
// stage is the activity: it gets agentapi.RemoteToolInput and returns pi's
// tool result (agentapi.RemoteToolResult).
type RemoteTool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is pi's JSON schema of the arguments (TypeBox's JSON),
	// an object schema; none means an object with no properties.
	Parameters    json.RawMessage `json:"parameters,omitempty"`
	TaskQueue     string          `json:"taskQueue"`
	ActivityType  string          `json:"activityType"`
	ExecutionMode ExecutionMode   `json:"executionMode,omitempty"`
	// StartToCloseTimeout bounds one attempt (a Go duration, default 10m).
	StartToCloseTimeout string `json:"startToCloseTimeout,omitempty"`
	// HeartbeatTimeout, when set, is how soon a lost worker is noticed:
	// the activity must heartbeat more often than this.
	HeartbeatTimeout string `json:"heartbeatTimeout,omitempty"`
	// ScheduleToStartTimeout, when set, bounds the wait for a worker on
	// TaskQueue; the call then ends with an error result.
	ScheduleToStartTimeout string `json:"scheduleToStartTimeout,omitempty"`
	// Replay says whether an attempt whose worker was lost (or that
	// failed) may run again: ReplayNever or ReplaySafe.
	Replay RemoteReplay `json:"replay"`
}

// RemoteReplay is a remote tool's replay class, as a built-in tool's retry
// class (tools.RetryClass).
type RemoteReplay string

// Replay classes.
const (
	// ReplayNever: one attempt. A lost worker ends the call with pi's
	// "No result provided" error result; it is never run twice.
	ReplayNever RemoteReplay = "never"
	// ReplaySafe: a lost or failed attempt runs again, on any worker of
	// the task queue, up to RemoteSafeAttempts attempts.
	ReplaySafe RemoteReplay = "safe"
)

// BuiltinToolNames are the seven coding tools' names (tools.BuiltinNames),
// which no remote tool may take.
var BuiltinToolNames = []string{"read", "bash", "edit", "write", "grep", "find", "ls"}

// RemoteSafeAttempts is how many attempts a ReplaySafe tool gets.
const RemoteSafeAttempts = 3

// DefaultRemoteTimeout is a remote tool's StartToCloseTimeout when it
// declares none, as a built-in tool's.
const DefaultRemoteTimeout = 10 * time.Minute

// Timeouts returns the parsed start-to-close, heartbeat and
// schedule-to-start timeouts (zero when not declared; Check has refused
// malformed ones).
func (t RemoteTool) Timeouts() (startToClose, heartbeat, scheduleToStart time.Duration) {
	startToClose = DefaultRemoteTimeout
	if d, err := time.ParseDuration(t.StartToCloseTimeout); err == nil && d > 0 {
		startToClose = d
	}
	heartbeat, _ = time.ParseDuration(t.HeartbeatTimeout)
	scheduleToStart, _ = time.ParseDuration(t.ScheduleToStartTimeout)
	return startToClose, heartbeat, scheduleToStart
}

// check validates one declaration; field names the entry
// ("remoteTools[0]").
func (t RemoteTool) check(field string) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(field+": "+format, args...))
	}
	if t.Name == "" {
		bad("name is missing")
	} else if !validToolName(t.Name) {
		bad("name %q: want letters, digits, _ and - only (at most 64), as model providers require", t.Name)
	}
	if t.TaskQueue == "" {
		bad("taskQueue is missing: the task queue the tool's worker polls")
	}
	if t.ActivityType == "" {
		bad("activityType is missing: the name the tool's worker registered its activity under")
	}
	switch t.Replay {
	case ReplayNever, ReplaySafe:
	case "":
		bad(`replay is missing: "never" (a lost attempt is not run again) or "safe" (it runs again)`)
	default:
		bad("replay %q: want never or safe", t.Replay)
	}
	if m := t.ExecutionMode; m != "" && m != ExecutionParallel && m != ExecutionSequential {
		bad("executionMode %q: want parallel or sequential", m)
	}
	if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
		var schema map[string]any
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			bad("parameters: want a JSON schema object")
		} else if ty, ok := schema["type"]; ok && ty != "object" {
			bad(`parameters: the schema's type is %v: a tool takes an object ("type": "object")`, ty)
		}
	}
	for _, d := range []struct{ name, value string }{
		{"startToCloseTimeout", t.StartToCloseTimeout},
		{"heartbeatTimeout", t.HeartbeatTimeout},
		{"scheduleToStartTimeout", t.ScheduleToStartTimeout},
	} {
		if d.value == "" {
			continue
		}
		if v, err := time.ParseDuration(d.value); err != nil || v <= 0 {
			bad("%s %q: want a positive Go duration such as 30s", d.name, d.value)
		}
	}
	return errs
}

// validToolName is what OpenAI and Anthropic accept as a function name.
func validToolName(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// CheckRemoteTools validates a run's remote tool declarations: each one,
// no name twice, and no name of the run's other tools (tools, which may
// hold MCP patterns such as "github__*") nor of reserved, the names no
// remote tool may take (the built-in tools).
func CheckRemoteTools(remote []RemoteTool, tools, reserved []string) error {
	var errs []error
	seen := map[string]bool{}
	for i, t := range remote {
		field := fmt.Sprintf("remoteTools[%d]", i)
		errs = append(errs, t.check(field)...)
		if t.Name == "" {
			continue
		}
		if seen[t.Name] {
			errs = append(errs, fmt.Errorf("%s: name %q is declared twice", field, t.Name))
		}
		seen[t.Name] = true
		for _, r := range reserved {
			if r == t.Name {
				errs = append(errs, fmt.Errorf("%s: name %q is a built-in tool's: a remote tool needs a name of its own", field, t.Name))
			}
		}
		for _, n := range tools {
			if n == t.Name || (len(n) > 0 && n[len(n)-1] == '*' && len(t.Name) >= len(n)-1 && t.Name[:len(n)-1] == n[:len(n)-1]) {
				errs = append(errs, fmt.Errorf("%s: name %q is also in tools (%q): a remote tool needs a name of its own", field, t.Name, n))
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(errs...)
}

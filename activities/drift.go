package activities

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// Config drift: in a fleet, one worker may lack what the others have (a pod
// started without a provider's key or an MCP config during a rollout). What
// a worker lacks but a worker of the same build could have fails with the
// retryable ErrConfigDrift, naming the worker, so that the workflow leaves
// the stage to another worker; a name no worker of this build could serve
// fails a run's first start at once, as a typo should.

// lacks is the ConfigDrift error of this worker lacking what.
func (a *Activities) lacks(format string, args ...any) error {
	return temporal.NewApplicationError(
		fmt.Sprintf("worker %s lacks %s; another worker of the task queue may have it", a.workerName(), fmt.Sprintf(format, args...)),
		ErrConfigDrift)
}

// workerName names this worker process for an operator: pid@hostname and
// the host's task queue when it serves one.
func (a *Activities) workerName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	name := fmt.Sprintf("%d@%s", os.Getpid(), host)
	if a.HostQueue != "" {
		name += " (host queue " + a.HostQueue + ")"
	}
	return name
}

// resolveModel checks the run's model. A provider this worker has not
// configured is drift when the build knows it or the run resolved before;
// a model its provider refuses is drift only when the run resolved before
// (on a worker whose provider served it).
func (a *Activities) resolveModel(in ResolveRunInput) error {
	_, err := a.Models.Model(in.Model)
	if err == nil {
		return nil
	}
	configured := slices.Contains(a.Models.Providers(), in.Model.Provider)
	switch {
	case !configured && (in.Resolved || llm.KnownProvider(in.Model.Provider)):
		return a.lacksProvider(in.Model)
	case !configured:
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrUnknownModelProvider, nil)
	case in.Resolved:
		return a.lacks("model %s: %v", in.Model, err)
	default:
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrUnknownModel, nil)
	}
}

func (a *Activities) lacksProvider(m agent.ModelRef) error {
	return a.lacks("model provider %q (its key or base URL is not set here; this worker has %q)", m.Provider, a.Models.Providers())
}

// resolveTools resolves the run's tools. A tool this worker lacks is drift
// when a worker of this build could have it: a built-in tool, an MCP tool
// (server__tool, server__*) of a server this worker does not have, any
// tool of a run that resolved before. Any other unknown name fails a first
// start at once.
func (a *Activities) resolveTools(in ResolveRunInput) ([]tools.Definition, error) {
	defs, err := a.Tools.Resolve(in.Tools)
	var unavailable *tools.UnavailableError
	if errors.As(err, &unavailable) {
		// An MCP server that does not answer may come back: retryable.
		return nil, temporal.NewApplicationError(err.Error(), ErrToolsUnavailable)
	}
	var unknown *tools.UnknownError
	if !errors.As(err, &unknown) {
		return defs, err
	}
	for _, n := range unknown.Names {
		if !in.Resolved && !slices.Contains(tools.BuiltinNames, n) && !a.lacksServerOf(n, unknown.Have) {
			return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrUnknownTool, nil)
		}
	}
	return nil, a.lacks("tools %q (this worker has %q)", unknown.Names, unknown.Have)
}

// lacksServerOf reports whether name is a well-formed MCP tool name
// (tools/mcptools: server, "__", tool) of a server none of whose tools this
// worker has. A server this worker has is the authority on its tools.
func (a *Activities) lacksServerOf(name string, have []string) bool {
	server, tool, ok := strings.Cut(name, "__")
	if !ok || server == "" || tool == "" || strings.HasPrefix(tool, "_") {
		return false
	}
	return !slices.ContainsFunc(have, func(h string) bool { return strings.HasPrefix(h, server+"__") })
}

// missingTools lists the run's tools this worker does not have, patterns
// included that match none of its tools: a model turn here would offer the
// model fewer tools than the run has.
func (a *Activities) missingTools(names []string) []string {
	var missing []string
	for _, n := range names {
		if prefix, ok := strings.CutSuffix(n, "*"); ok {
			if len(a.Tools.Expand([]string{n})) == 0 {
				missing = append(missing, prefix+"*")
			}
			continue
		}
		if _, ok := a.Tools.Get(n); !ok {
			missing = append(missing, n)
		}
	}
	return missing
}

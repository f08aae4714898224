package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// SubAgentTool is the name of the tool through which a run's model delegates
// to a sub-agent: one tool whose "agent" argument names the profile (as
// Claude Code's Task tool, opencode's task and pi's subagent extension do),
// so models meet the shape they were trained on and the tool list does not
// grow with the profiles.
const SubAgentTool = "task"

// Sub-agent limits when a run sets none.
const (
	// DefaultSubAgentDepth lets the run's sub-agents run, and no deeper
	// ones: a child does not delegate unless the run allows more.
	DefaultSubAgentDepth = 1
	// DefaultSubAgentFanOut is how many sub-agent calls may run at once
	// in one run.
	DefaultSubAgentFanOut = 4
)

// SubAgent is a profile a run may delegate to: the model calls the task
// tool with the profile's name and a prompt, and a child AgentLoop
// workflow with the profile's settings answers it.
type SubAgent struct {
	// Name is what the model passes as "agent": letters, digits, - and _.
	Name string `json:"name"`
	// Description tells the model when to use the profile.
	Description  string `json:"description"`
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// Model defaults to the parent's model (with its options).
	Model        *ModelRef     `json:"model,omitempty"`
	ModelOptions *ModelOptions `json:"modelOptions,omitempty"`
	// Tools are the child's tools, from the worker's registry.
	Tools []string `json:"tools,omitempty"`
	// TaskQueue runs the child on another task queue; empty: the parent's.
	TaskQueue string `json:"taskQueue,omitempty"`
	// Budget bounds one child of this profile; the parent's remaining
	// budget bounds it too.
	Budget *Budget `json:"budget,omitempty"`
}

// SubAgentRef names a sub-agent run: its profile and its workflow.
type SubAgentRef struct {
	Agent      string `json:"agent"`
	WorkflowID string `json:"workflowId"`
}

// SubAgentLimits bound delegation; a zero field takes its default.
type SubAgentLimits struct {
	// MaxDepth is how many levels of sub-agents may run below the run
	// (DefaultSubAgentDepth).
	MaxDepth int `json:"maxDepth,omitempty"`
	// MaxFanOut is how many sub-agent calls of one run may run at once
	// (DefaultSubAgentFanOut); a call past it ends with an error result.
	MaxFanOut int `json:"maxFanOut,omitempty"`
	// CheckInterval is how often a run that continued as new while its
	// sub-agents ran checks that those it carried still run (a Go
	// duration, "10m" by default): a child terminated from outside sends
	// nothing, and its call ends at the next check.
	CheckInterval string `json:"checkInterval,omitempty"`
}

// CheckEvery is the parsed CheckInterval, def when it gives none.
func (s *SubAgentLimits) CheckEvery(def time.Duration) time.Duration {
	if s == nil {
		return def
	}
	if d, err := time.ParseDuration(s.CheckInterval); err == nil && d > 0 {
		return d
	}
	return def
}

// Depth is the parsed MaxDepth.
func (s *SubAgentLimits) Depth() int {
	if s == nil || s.MaxDepth == 0 {
		return DefaultSubAgentDepth
	}
	return s.MaxDepth
}

// FanOut is the parsed MaxFanOut.
func (s *SubAgentLimits) FanOut() int {
	if s == nil || s.MaxFanOut == 0 {
		return DefaultSubAgentFanOut
	}
	return s.MaxFanOut
}

// ToolSpec is a tool's definition as the model sees it, for a tool the
// run defines itself (the task tool) rather than the worker's registry.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// SubAgentsOffered reports whether the run's model is offered the task
// tool: the run has profiles and its depth is below the limit.
func (c *LoopConfig) SubAgentsOffered() bool {
	return len(c.SubAgents) > 0 && c.SubAgentDepth < c.SubAgentLimits.Depth()
}

// SubAgentProfile returns the profile of a name.
func (c *LoopConfig) SubAgentProfile(name string) (SubAgent, bool) {
	i := slices.IndexFunc(c.SubAgents, func(s SubAgent) bool { return s.Name == name })
	if i < 0 {
		return SubAgent{}, false
	}
	return c.SubAgents[i], true
}

// SubAgentToolSpec is the task tool as the model sees it: the profiles
// listed in its description and named by its schema.
func (c *LoopConfig) SubAgentToolSpec() ToolSpec {
	var desc strings.Builder
	desc.WriteString("Delegate a task to a sub-agent, which works on it with its own context and tools and answers " +
		"with its final message. Give it everything it needs in the prompt: it sees nothing of this conversation. " +
		"Several task calls in one message run at once. Sub-agents:\n")
	names := make([]string, 0, len(c.SubAgents))
	for _, s := range c.SubAgents {
		fmt.Fprintf(&desc, "- %s: %s\n", s.Name, s.Description)
		names = append(names, s.Name)
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"agent":  map[string]any{"type": "string", "enum": names, "description": "The sub-agent to delegate to."},
			"prompt": map[string]any{"type": "string", "description": "The task, with all the context the sub-agent needs."},
		},
		"required": []string{"agent", "prompt"},
	}
	params, _ := json.Marshal(schema)
	return ToolSpec{Name: SubAgentTool, Description: strings.TrimSuffix(desc.String(), "\n"), Parameters: params}
}

var profileName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// checkSubAgents checks the profiles and limits.
func (c *LoopConfig) checkSubAgents() []error {
	var errs []error
	seen := map[string]bool{}
	for i, s := range c.SubAgents {
		if !profileName.MatchString(s.Name) {
			errs = append(errs, fmt.Errorf("subAgents[%d].name %q: want 1 to 64 letters, digits, - or _", i, s.Name))
		}
		if seen[s.Name] {
			errs = append(errs, fmt.Errorf("subAgents: %q listed twice", s.Name))
		}
		seen[s.Name] = true
		if strings.TrimSpace(s.Description) == "" {
			errs = append(errs, fmt.Errorf("subAgents[%d] (%s): a description tells the model when to use it", i, s.Name))
		}
		if s.Model != nil && (s.Model.Provider == "" || s.Model.ID == "") {
			errs = append(errs, fmt.Errorf(`subAgents[%d].model: want {"provider": "...", "id": "..."}`, i))
		}
		if slices.Contains(s.Tools, SubAgentTool) {
			errs = append(errs, fmt.Errorf("subAgents[%d].tools: %q is given to a child by the depth limit (subAgentLimits.maxDepth), not by its tools", i, SubAgentTool))
		}
		if err := s.Budget.Check(); err != nil {
			errs = append(errs, fmt.Errorf("subAgents[%d]: %w", i, err))
		}
	}
	if l := c.SubAgentLimits; l != nil && (l.MaxDepth < 0 || l.MaxFanOut < 0) {
		errs = append(errs, errors.New("subAgentLimits: maxDepth and maxFanOut must not be negative"))
	}
	if c.SubAgentDepth < 0 {
		errs = append(errs, errors.New("subAgentDepth must not be negative"))
	}
	if len(c.SubAgents) > 0 && slices.Contains(c.Tools, SubAgentTool) {
		errs = append(errs, fmt.Errorf("tools: %q is the sub-agent tool of a run with subAgents; a registry tool of that name cannot be used beside it", SubAgentTool))
	}
	if len(c.SubAgents) > 0 && slices.ContainsFunc(c.RemoteTools, func(t RemoteTool) bool { return t.Name == SubAgentTool }) {
		errs = append(errs, fmt.Errorf("remoteTools: %q is the sub-agent tool of a run with subAgents; a remote tool of that name cannot be used beside it", SubAgentTool))
	}
	return errs
}

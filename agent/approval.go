package agent

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// ApprovalPolicy names the tool calls that wait for a person before they
// run. A call waits when any part of the policy matches it.
type ApprovalPolicy struct {
	// Tools lists tool names whose every call needs approval; "*" is
	// every tool.
	Tools []string `json:"tools,omitempty"`
	// Mutating makes every tool that is not read-only need approval.
	Mutating bool `json:"mutating,omitempty"`
	// Rules match an argument of a tool against a regular expression, such
	// as bash commands that push or delete.
	Rules []ApprovalRule `json:"rules,omitempty"`
	// Timeout (a Go duration such as "30m") turns silence into a block;
	// empty waits as long as it takes.
	Timeout string `json:"timeout,omitempty"`
}

// ApprovalRule matches one argument of one tool.
type ApprovalRule struct {
	Tool    string `json:"tool"`
	Arg     string `json:"arg"`
	Pattern string `json:"pattern"`
}

// Approval decisions.
const (
	ApprovalAllow  = "allow"
	ApprovalDeny   = "deny"
	ApprovalAlways = "always" // allow, and allow this tool for the rest of the session
)

// ApprovalInfo is the payload of approval events (not pi events: they never
// appear in conformance traces).
type ApprovalInfo struct {
	// Reason says why the call needs a person (request) or why it was
	// decided so (decision).
	Reason string `json:"reason,omitempty"`
	// Decision is allow, deny or always; a timeout or an abort is a deny.
	Decision string `json:"decision,omitempty"`
	// Deadline is when silence becomes a block, Unix milliseconds.
	Deadline int64 `json:"deadline,omitempty"`
	// Position is the call's position in its message, from 1, set only
	// when another call of the message has the same id: an approval of such
	// a call while both wait must name it (not a pi field).
	Position int `json:"position,omitempty"`
	// SubAgent names the sub-agent whose call it is, when a run's watchers
	// see a call of one of its sub-agents (not a pi field).
	SubAgent *SubAgentRef `json:"subAgent,omitempty"`
}

// Approval event types.
const (
	EventApprovalRequest  EventType = "approval_request"
	EventApprovalDecision EventType = "approval_decision"
)

// Check reports what is wrong with a policy.
func (p *ApprovalPolicy) Check() error {
	if p == nil {
		return nil
	}
	var errs []error
	for i, r := range p.Rules {
		if r.Tool == "" || r.Arg == "" {
			errs = append(errs, fmt.Errorf("approval.rules[%d]: want tool and arg", i))
		}
		if _, err := regexp.Compile(r.Pattern); err != nil {
			errs = append(errs, fmt.Errorf("approval.rules[%d].pattern: %w", i, err))
		}
	}
	if p.Timeout != "" {
		if d, err := time.ParseDuration(p.Timeout); err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("approval.timeout %q: want a positive Go duration such as 30m", p.Timeout))
		}
	}
	return errors.Join(errs...)
}

// Needs says why a call needs approval, or "" when it does not. readOnly
// is the tool's declaration.
func (p *ApprovalPolicy) Needs(call Content, readOnly bool) string {
	if p == nil {
		return ""
	}
	for _, t := range p.Tools {
		if t == "*" || t == call.Name {
			return fmt.Sprintf("%s calls need approval", call.Name)
		}
	}
	if p.Mutating && !readOnly {
		return fmt.Sprintf("%s can change things", call.Name)
	}
	for _, r := range p.Rules {
		if r.Tool != call.Name {
			continue
		}
		v, ok := call.Arguments[r.Arg].(string)
		re, err := regexp.Compile(r.Pattern)
		if ok && err == nil && re.MatchString(v) {
			return fmt.Sprintf("%s %s matches %q", call.Name, r.Arg, r.Pattern)
		}
	}
	return ""
}

// TimeoutDuration is the parsed timeout, zero for none.
func (p *ApprovalPolicy) TimeoutDuration() time.Duration {
	if p == nil || p.Timeout == "" {
		return 0
	}
	d, _ := time.ParseDuration(p.Timeout)
	return d
}

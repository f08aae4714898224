package mcptools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/tools"
)

// Tool is one tool of an MCP server, as the worker's registry holds it.
type Tool struct {
	s       *server
	mcpName string
	def     tools.Definition
}

// callMargin is what an ExecuteToolCall attempt may take beyond the call
// timeout: a reconnect first, and the result's trip back.
const callMargin = 15 * time.Second

// ToolName is the name the model sees: server, "__", tool, with every
// character that model APIs refuse in a tool name (anything but letters,
// digits, '_' and '-') replaced by '_', cut to their 64 characters.
func ToolName(server, tool string) string {
	b := []byte(server + Separator + tool)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

func newTool(s *server, name string, t *mcp.Tool) *Tool {
	params, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil {
		params = nil
	}
	ann := t.Annotations
	if ann == nil {
		ann = &mcp.ToolAnnotations{}
	}
	label := t.Title
	if label == "" {
		label = ann.Title
	}
	if label == "" {
		label = t.Name
	}
	// Not known to be idempotent: one attempt, as bash and edit. Only
	// the server's own hints make a call safe to run again.
	retry := tools.RetryOnce
	if ann.ReadOnlyHint || ann.IdempotentHint {
		retry = tools.RetrySafe
	}
	return &Tool{s: s, mcpName: t.Name, def: tools.Definition{
		Name:        name,
		Label:       label,
		Description: t.Description,
		Parameters:  params,
		ReadOnly:    ann.ReadOnlyHint,
		Durability: tools.Durability{
			Retry:   retry,
			Timeout: s.callTimeout() + s.m.opts.ConnectTimeout + callMargin,
		},
	}}
}

func (s *server) callTimeout() time.Duration {
	if s.cfg.Timeout > 0 {
		return time.Duration(s.cfg.Timeout)
	}
	return DefaultCallTimeout
}

// Definition implements tools.Tool.
func (t *Tool) Definition() tools.Definition { return t.def }

// Server and MCPName say which server's tool this is.
func (t *Tool) Server() string  { return t.s.name }
func (t *Tool) MCPName() string { return t.mcpName }

var tokens atomic.Int64

// Execute implements tools.Tool: one tools/call on the server's live
// connection (made again first when it was lost). Progress notifications
// become partial results. A server that does not answer within the call
// timeout gives an error result, as does one that died: a retry-safe tool
// then fails the attempt instead (tools.Fault), for Temporal to run it
// again on a fresh connection.
func (t *Tool) Execute(ctx context.Context, call tools.Call) (agent.ToolResult, error) {
	s := t.s
	if s.sandboxed() {
		in, release, err := s.instance(call.Workspace)
		if err != nil {
			return agent.ToolResult{}, err
		}
		defer release()
		s = in
	}
	sess, err := s.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return agent.ToolResult{}, fmt.Errorf("MCP tool %s aborted", t.def.Name)
		}
		return agent.ToolResult{}, fmt.Errorf("MCP server %s is not available: %v", s.name, err)
	}
	timeout := s.callTimeout()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	token := fmt.Sprintf("agentloop-%d", tokens.Add(1))
	s.progress.Store(token, func(p *mcp.ProgressNotificationParams) { call.EmitUpdate(progressResult(p)) })
	defer s.progress.Delete(token)
	params := &mcp.CallToolParams{Name: t.mcpName, Arguments: call.Args}
	params.SetProgressToken(token)
	res, err := sess.CallTool(cctx, params)
	switch {
	case err == nil:
		return toResult(s.name, t.mcpName, res)
	case ctx.Err() != nil:
		return agent.ToolResult{}, fmt.Errorf("MCP tool %s aborted", t.def.Name)
	case cctx.Err() != nil:
		msg := fmt.Sprintf("MCP server %s did not answer %s within %s", s.name, t.mcpName, timeout)
		pctx, pcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer pcancel()
		if perr := sess.Ping(pctx, nil); perr != nil {
			s.drop(sess)
			msg += " and does not answer pings either; the worker restarts it at the next call"
		}
		return agent.ToolResult{}, errors.New(msg)
	case isWireError(err):
		return agent.ToolResult{}, fmt.Errorf("MCP server %s: %v", s.name, err)
	default:
		s.drop(sess)
		lost := fmt.Errorf("MCP server %s stopped during the call (%v); the worker reconnects at the next call", s.name, err)
		if t.def.Durability.Retry == tools.RetrySafe && transportError(err) {
			return agent.ToolResult{}, tools.Fault(lost)
		}
		return agent.ToolResult{}, lost
	}
}

func progressResult(p *mcp.ProgressNotificationParams) agent.ToolResult {
	text := fmt.Sprintf("Progress %g", p.Progress)
	if p.Total > 0 {
		text += fmt.Sprintf("/%g", p.Total)
	}
	if p.Message != "" {
		text += ": " + p.Message
	}
	return agent.TextResult(text)
}

// Details is what an MCP tool's result carries besides its content.
type Details struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// StructuredContent is the result's structuredContent, as the server
	// sent it.
	StructuredContent any `json:"structuredContent,omitempty"`
}

// toResult maps an MCP result onto pi's tool result: text blocks as text
// (each cut as pi's tools cut their output), images as images, other
// blocks described in text; structuredContent goes to details, and stands
// as JSON text when the server sent no content. isError is pi's thrown
// error: an error whose message is the result's text.
func toResult(server, tool string, r *mcp.CallToolResult) (agent.ToolResult, error) {
	content := make([]agent.Content, 0, len(r.Content))
	for _, c := range r.Content {
		content = append(content, convert(c))
	}
	if len(content) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			content = append(content, textBlock(string(b)))
		}
	}
	if r.IsError {
		var texts []string
		for _, c := range content {
			if c.Type == agent.ContentText {
				texts = append(texts, c.Text)
			}
		}
		if len(texts) == 0 {
			return agent.ToolResult{}, fmt.Errorf("MCP tool %s of server %s failed", tool, server)
		}
		return agent.ToolResult{}, errors.New(strings.Join(texts, "\n"))
	}
	details, err := json.Marshal(Details{Server: server, Tool: tool, StructuredContent: r.StructuredContent})
	if err != nil {
		details = json.RawMessage("{}")
	}
	return agent.ToolResult{Content: content, Details: details}, nil
}

func convert(c mcp.Content) agent.Content {
	switch c := c.(type) {
	case *mcp.TextContent:
		return textBlock(c.Text)
	case *mcp.ImageContent:
		return agent.Image(base64.StdEncoding.EncodeToString(c.Data), c.MIMEType)
	case *mcp.AudioContent:
		return agent.Text(fmt.Sprintf("[audio %s, %s, not shown]", c.MIMEType, tools.FormatSize(len(c.Data))))
	case *mcp.ResourceLink:
		text := "Resource: " + c.URI
		if c.Name != "" {
			text += " (" + c.Name + ")"
		}
		if c.Description != "" {
			text += ": " + c.Description
		}
		return agent.Text(text)
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return agent.Text("[empty resource]")
		}
		if r.Blob == nil {
			return textBlock("Resource " + r.URI + ":\n" + r.Text)
		}
		if strings.HasPrefix(r.MIMEType, "image/") {
			return agent.Image(base64.StdEncoding.EncodeToString(r.Blob), r.MIMEType)
		}
		return agent.Text(fmt.Sprintf("[resource %s: %s, %s, not shown]", r.URI, r.MIMEType, tools.FormatSize(len(r.Blob))))
	default:
		b, _ := json.Marshal(c)
		return textBlock(string(b))
	}
}

// textBlock cuts text as pi's tools cut their output, saying so.
func textBlock(s string) agent.Content {
	tr := tools.TruncateHead(s, tools.DefaultMaxLines, tools.DefaultMaxBytes)
	if !tr.Truncated {
		return agent.Text(s)
	}
	return agent.Text(fmt.Sprintf("%s\n\n[Showing %d of %d lines (%s of %s); the MCP server's output was cut]",
		tr.Content, tr.OutputLines, tr.TotalLines, tools.FormatSize(tr.OutputBytes), tools.FormatSize(tr.TotalBytes)))
}

package demo

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/llm"
)

// reply is the demo model's answer to a request: it reads the current
// run's prompt (the first user message after the last final answer) and
// either plays the fix-the-test script, or does the one thing the prompt
// names with a real tool and then reports what the tool returned, or says
// what it can do. It depends on the request alone (llm.Script.Reply).
func reply(req llm.Request) llm.ScriptedResponse {
	run := currentRun(req.Messages)
	if len(run) == 0 || run[0].Role != agent.RoleUser {
		return textReply("There is no prompt to answer. " + capabilities)
	}
	prompt := textOf(run[0])
	steps := 0
	for _, m := range run {
		if m.Role == agent.RoleAssistant {
			steps++
		}
	}
	if wantsFix(prompt) {
		if steps == 2 && lastResultPassed(run) {
			// The first test run passed: the project was fixed before.
			return textReply("The test passes already (" + collapseLine(textOf(run[len(run)-1])) + "): there is nothing to fix.")
		}
		steered := strings.Contains(strings.ToLower(prompt), "exclamation")
		for _, m := range run[1:] {
			steered = steered || (m.Role == agent.RoleUser && strings.Contains(strings.ToLower(textOf(m)), "exclamation"))
		}
		if script := fixScript(steered); steps < len(script) {
			return script[steps]
		}
		return textReply("The test passes; there is nothing more to do.")
	}
	if steps == 0 {
		return act(prompt, toolNames(req.Tools))
	}
	return report(run)
}

// lastResultPassed says whether the run's last message is a tool result
// that is not an error.
func lastResultPassed(run []agent.Message) bool {
	last := run[len(run)-1]
	return last.Role == agent.RoleToolResult && !last.IsError
}

func collapseLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// capabilities is what the demo model says it can do.
const capabilities = `I am the scripted demo model (no API key, no real language model), with the real coding tools. I can:
- list the files ("list the files", "what is in src")
- read a file ("read greet.sh")
- search ("grep Hello", "search for 'Helo'")
- run a command ("run ./test.sh", "run ls -la")
- fix the sample project's failing test ("fix the test")
For real answers, start the worker with a model's API key and pass -model (docs/models.md).`

// currentRun is the tail of the transcript since the last final answer
// (an assistant message without tool calls): the run being answered.
func currentRun(ms []agent.Message) []agent.Message {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role == agent.RoleAssistant && len(ms[i].ToolCalls()) == 0 {
			return ms[i+1:]
		}
	}
	return ms
}

func wantsFix(prompt string) bool {
	p := strings.ToLower(prompt)
	return strings.Contains(p, "fix") && strings.Contains(p, "test")
}

var (
	quoted   = regexp.MustCompile("`([^`]+)`|\"([^\"]+)\"|'([^']+)'")
	fileWord = regexp.MustCompile(`[\w./-]*\w\.\w+|[\w.-]+/[\w./-]*`)
)

// act answers a prompt's first step: one tool call for what it names, or
// what the model can do.
func act(prompt string, have []string) llm.ScriptedResponse {
	p := strings.ToLower(strings.TrimSpace(prompt))
	q := firstQuoted(prompt)
	file := fileWord.FindString(prompt)
	call := func(name, why string, args map[string]any) llm.ScriptedResponse {
		if !slices.Contains(have, name) {
			return textReply(fmt.Sprintf("I would use the %s tool for that, but this session does not have it (its tools: %s).", name, strings.Join(have, ", ")))
		}
		return llm.ScriptedResponse{Content: []agent.Content{agent.Text(why), agent.ToolCall("call_"+name+"_1", name, args)}}
	}
	switch {
	case hasWord(p, "run", "execute") || strings.HasPrefix(p, "./"):
		cmd := q
		if cmd == "" {
			cmd = strings.TrimSpace(after(prompt, "run", "execute"))
		}
		if cmd == "" || strings.Contains(strings.ToLower(cmd), "test") && !strings.Contains(cmd, "/") {
			cmd = "./test.sh"
		}
		return call("bash", "Running `"+cmd+"`.", map[string]any{"command": cmd})
	case hasWord(p, "grep", "search", "look for"):
		pattern := q
		if pattern == "" {
			pattern = firstField(after(prompt, "grep", "search for", "search", "look for"))
		}
		if pattern == "" {
			return textReply("What should I search for? For example: grep Hello")
		}
		args := map[string]any{"pattern": pattern}
		if file != "" && file != pattern {
			args["path"] = file
		}
		return call("grep", "Searching for "+pattern+".", args)
	case hasWord(p, "find") && strings.Contains(prompt, "*"):
		pattern := firstField(after(prompt, "find"))
		return call("find", "Finding "+pattern+".", map[string]any{"pattern": pattern})
	case file != "" && hasWord(p, "read", "show", "cat", "open", "explain", "print", "what"):
		return call("read", "Reading "+file+".", map[string]any{"path": file})
	case hasWord(p, "list", "ls", "files", "what is in", "what's in", "look at", "project"):
		path := "."
		if file != "" {
			path = file
		} else if d := firstField(after(prompt, "what is in", "what's in", "in")); d != "" && d != "the" && d != "this" {
			path = d
		}
		why := "Listing " + path + "."
		if path == "." {
			why = "Listing the workspace."
		}
		return call("ls", why, map[string]any{"path": path})
	}
	return textReply(capabilities)
}

// report is the final answer after tool calls: what each call of the last
// assistant message returned.
func report(run []agent.Message) llm.ScriptedResponse {
	var b strings.Builder
	for _, m := range run {
		if m.Role != agent.RoleToolResult {
			continue
		}
		out := strings.TrimRight(textOf(m), "\n")
		if m.IsError {
			fmt.Fprintf(&b, "%s failed:\n\n```\n%s\n```\n\n", m.ToolName, out)
			continue
		}
		if out == "" {
			out = "(no output)"
		}
		fmt.Fprintf(&b, "%s returned:\n\n```\n%s\n```\n\n", m.ToolName, out)
	}
	if b.Len() == 0 {
		return textReply("Done.")
	}
	return textReply(strings.TrimSpace(b.String()))
}

func textReply(s string) llm.ScriptedResponse {
	return llm.ScriptedResponse{Content: []agent.Content{agent.Text(s)}}
}

func textOf(m agent.Message) string {
	var parts []string
	for _, c := range m.Content {
		if c.Type == agent.ContentText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func toolNames(ts []llm.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func firstQuoted(s string) string {
	m := quoted.FindStringSubmatch(s)
	for _, g := range m[min(1, len(m)):] {
		if g != "" {
			return g
		}
	}
	return ""
}

// hasWord reports whether p holds one of the words as a whole word.
func hasWord(p string, words ...string) bool {
	for _, w := range words {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(w) + `\b`).MatchString(p) {
			return true
		}
	}
	return false
}

// after returns what follows the first of the words in s (case-insensitive).
func after(s string, words ...string) string {
	for _, w := range words {
		loc := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(w) + `\b`).FindStringIndex(s)
		if loc != nil {
			rest := strings.TrimSpace(s[loc[1]:])
			for _, filler := range []string{"the ", "for ", "in "} {
				rest = strings.TrimPrefix(rest, filler)
			}
			return strings.TrimRight(rest, ".?! ")
		}
	}
	return ""
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return strings.Trim(f[0], ".,;:?!")
	}
	return ""
}

package agentapi

import (
	"strings"

	"github.com/durable-agents/agentloop/agent"
)

// maxTitleRunes cuts a title to what fits a list line.
const maxTitleRunes = 80

// Title is a session's title from its first prompt: the text on one line,
// cut to maxTitleRunes.
func Title(prompts []agent.Message) string {
	for _, m := range prompts {
		if t := strings.Join(strings.Fields(agent.TextOf(m.Content)), " "); t != "" {
			if r := []rune(t); len(r) > maxTitleRunes {
				t = string(r[:maxTitleRunes-1]) + "…"
			}
			return t
		}
	}
	return ""
}

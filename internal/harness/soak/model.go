package soak

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/durable-agents/agentloop/internal/harness/fleettest"
)

// The soak's model: a local server speaking the OpenAI Chat Completions
// streaming wire format (fleettest.Model), which the workers
// reach through their openai-compatible provider. It decides each answer
// from the request alone, so any worker, any attempt, gets the same answer:
//
//   - after the user's "Prompt K of session S", a short text and two tool
//     calls: bash appending "S K" to the session's ledger (the side effect
//     the soak counts) and then sleeping, so that kills land mid-command;
//     and write, an idempotent overwrite of notes/K.txt;
//   - after the tool results, the answer "Prompt K of session S is
//     recorded.".
//
// Each answer streams in chunks ChunkDelay apart, so that kills land
// mid-stream too.

// ModelID is the model's id under the workers' openai-compatible provider.
const ModelID = "soak"

// Ledger is the file in a session's workspace each bash call appends to.
const Ledger = "ledger"

// promptText is prompt k of session s; promptRE reads it back.
func promptText(s string, k int) string { return fmt.Sprintf("Prompt %d of session %s.", k, s) }

var promptRE = regexp.MustCompile(`Prompt (\d+) of session (\S+)\.`)

// answerText is the model's answer to prompt k of session s.
func answerText(s string, k int) string {
	return fmt.Sprintf("Prompt %d of session %s is recorded.", k, s)
}

// bashCommand is the side-effecting command of prompt k of session s.
func bashCommand(s string, k int) string {
	return fmt.Sprintf("echo '%s %d' >> %s; sleep 0.3; echo recorded", s, k, Ledger)
}

// bashCallID is the id of that bash call: the same in every attempt of the
// model turn, so that the event log and ledger can be matched.
func bashCallID(s string, k int) string { return fmt.Sprintf("call_%s_%d_bash", s, k) }

// startModel starts the soak's model server.
func startModel(delay time.Duration) (*fleettest.Model, error) {
	return fleettest.StartModel(delay, decide)
}

// decide answers a request from its last user message's prompt.
func decide(req *fleettest.Request) (fleettest.Answer, error) {
	// The prompt being answered is the last user message's.
	var session string
	var k int
	if sm := promptRE.FindStringSubmatch(req.LastUser()); sm != nil {
		fmt.Sscan(sm[1], &k)
		session = sm[2]
	}
	if session == "" {
		return fleettest.Answer{}, errors.New("no soak prompt in the request")
	}
	if req.Last().Role == "tool" {
		return fleettest.Answer{Text: answerText(session, k)}, nil
	}
	return fleettest.Answer{
		Text: fmt.Sprintf("Recording prompt %d.", k),
		Calls: []fleettest.ToolCall{
			{ID: bashCallID(session, k), Name: "bash", Args: map[string]any{"command": bashCommand(session, k)}},
			{ID: fmt.Sprintf("call_%s_%d_write", session, k), Name: "write",
				Args: map[string]any{"path": fmt.Sprintf("notes/%d.txt", k), "content": promptText(session, k) + "\n"}},
		},
	}, nil
}

//go:build ignore

// Writes the loop benchmark's scenarios (the conformance scenario format):
//
//	go run bench/scenarios/gen.go
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

type obj = map[string]any

var params = obj{
	"type":       "object",
	"properties": obj{"path": obj{"type": "string"}},
	"required":   []string{"path"},
}

func tool(ms int) obj {
	return obj{"name": fmt.Sprintf("tool%dms", ms), "parameters": params, "behavior": obj{"delayMs": ms}}
}

// toolTurns is turns answers of a short text and calls tool calls each, then
// a final answer.
func toolTurns(turns, calls, ms int) []obj {
	var model []obj
	for t := 1; t <= turns; t++ {
		content := []obj{{"type": "text", "text": fmt.Sprintf("Turn %d: looking at the next files.", t)}}
		for c := 1; c <= calls; c++ {
			content = append(content, obj{"type": "toolCall", "id": fmt.Sprintf("t%dc%d", t, c),
				"name": fmt.Sprintf("tool%dms", ms), "arguments": obj{"path": fmt.Sprintf("src/file%d.go", c)}})
		}
		model = append(model, obj{"content": content})
	}
	return append(model, obj{"content": []obj{{"type": "text", "text": "done"}}})
}

// textTurns is turns plain answers; queued follow-ups start turns 2..n.
func textTurns(turns int) ([]obj, []string) {
	var model []obj
	var followUps []string
	for t := 1; t <= turns; t++ {
		model = append(model, obj{"content": []obj{{"type": "text", "text": fmt.Sprintf("Answer %d.", t)}}})
		if t > 1 {
			followUps = append(followUps, fmt.Sprintf("and then step %d", t))
		}
	}
	return model, followUps
}

func main() {
	dir := filepath.Dir(os.Args[0])
	if len(os.Args) > 1 {
		dir = os.Args[1]
	} else {
		dir = "bench/scenarios"
	}
	var all []obj
	for _, ms := range []int{0, 100} {
		for _, mode := range []string{"sequential", "parallel"} {
			all = append(all, obj{
				"name":          fmt.Sprintf("loop-10x4-%dms-%s", ms, mode[:3]),
				"description":   fmt.Sprintf("10 turns of 4 %s tool calls of %d ms each, then a final answer.", mode, ms),
				"toolExecution": mode,
				"tools":         []obj{tool(ms)},
				"model":         toolTurns(10, 4, ms),
			})
		}
	}
	all = append(all, obj{
		"name":          "loop-16x500ms",
		"description":   "One parallel batch of 16 tool calls of 500 ms each, then a final answer.",
		"toolExecution": "parallel",
		"tools":         []obj{tool(500)},
		"model":         toolTurns(1, 16, 500),
	})
	all = append(all, obj{
		"name":          "loop-200x1-0ms",
		"description":   "200 turns of one 0 ms tool call each, then a final answer.",
		"toolExecution": "parallel",
		"tools":         []obj{tool(0)},
		"model":         toolTurns(200, 1, 0),
	})
	for _, n := range []int{1, 11} {
		model, followUps := textTurns(n)
		s := obj{
			"name":        fmt.Sprintf("loop-%dx0", n),
			"description": fmt.Sprintf("%d turns without tool calls (turns 2..%d start from queued follow-ups): the per-turn baseline.", n, n),
			"tools":       []obj{tool(0)},
			"model":       model,
		}
		if len(followUps) > 0 {
			s["queued"] = obj{"followUp": followUps}
		}
		all = append(all, s)
	}
	for _, s := range all {
		b, err := json.MarshalIndent(s, "", " ")
		if err != nil {
			panic(err)
		}
		if err := os.WriteFile(filepath.Join(dir, s["name"].(string)+".json"), append(b, '\n'), 0o644); err != nil {
			panic(err)
		}
	}
}

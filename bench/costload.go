package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Load as well as bills: what each scenario asks of the server per second
// it runs, by operation, and what 1,000 agents doing it at once would ask
// of a Temporal Cloud namespace against its default limits.

// Temporal Cloud's default namespace limits, from
// https://docs.temporal.io/cloud/limits ("Actions per second: Default
// limit: 500 actions per second (APS)"; "Requests per second: Default
// limit: 2000 requests per second (RPS)"); both grow on their own with
// 7 days of use and never fall below these.
const (
	cloudDefaultAPS = 500
	cloudDefaultRPS = 2000
	projectedAgents = 1000
)

type namedFigures struct {
	name string
	f    costFigures
}

// printLoad prints every scenario's requests by operation per second it
// ran, then the projection for projectedAgents agents each running it
// without pause. The workers' task polls are left out: a worker makes them
// whatever it runs, and a fleet's polls grow with its workers, not its
// agents.
func printLoad(measured []namedFigures) {
	fmt.Printf("\nrequests per agent-second, by operation (worker task polls left out):\n")
	for _, m := range measured {
		if m.f.seconds <= 0 {
			continue
		}
		ops := make([]string, 0, len(m.f.ops))
		for op := range m.f.ops {
			ops = append(ops, op)
		}
		slices.SortFunc(ops, func(a, b string) int { return cmp.Compare(m.f.ops[b], m.f.ops[a]) })
		var parts []string
		for _, op := range ops {
			parts = append(parts, fmt.Sprintf("%s %.3f", op, m.f.ops[op]/m.f.seconds))
		}
		fmt.Printf("  %-66s %s\n", strings.TrimSpace(m.name), strings.Join(parts, ", "))
	}
	fmt.Printf("\n%d agents each running the scenario without pause, against a Temporal Cloud namespace's default limits\n"+
		"(%d actions/s, %d requests/s: https://docs.temporal.io/cloud/limits):\n", projectedAgents, cloudDefaultAPS, cloudDefaultRPS)
	fmt.Printf("  %-66s %12s %7s %12s %7s\n", "scenario", "actions/s", "of APS", "requests/s", "of RPS")
	for _, m := range measured {
		if m.f.seconds <= 0 {
			continue
		}
		aps := m.f.billable() / m.f.seconds * projectedAgents
		rps := m.f.requests / m.f.seconds * projectedAgents
		fmt.Printf("  %-66s %12.0f %6.0f%% %12.0f %6.0f%%\n", strings.TrimSpace(m.name), aps, 100*aps/cloudDefaultAPS,
			rps, 100*rps/cloudDefaultRPS)
	}
	fmt.Printf("  (billable actions from history and the server's counts as above; the idle rows are per hour scaled back to a second)\n")
}

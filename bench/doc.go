// Command bench measures the agent loop on a real Temporal server:
//
//	go run ./bench stream     live streaming latency: provider chunk to client
//	go run ./bench history    history bytes per turn of a 200-turn run
//	go run ./bench session    a session's loop inline or as a child per prompt
//	go run ./bench content    large tool output: a 1,000-prompt session, a
//	                          2,000-turn run, 50 sessions on one worker,
//	                          stubs against the SDK's external storage
//	go run ./bench cost       billable actions and unbilled reads per scenario
//	                          (a 10x4 run, a streamed turn, an idle hour, a
//	                          session with approvals) beside a plain workflow
//	go run ./bench loop       the workflow against pi's own loop (bench/pi) on
//	                          the scenarios in bench/scenarios, the floor round
//	                          trip, 200 concurrent runs, replay; see loop.go
//	go run ./bench servers    bench loop's concurrency section on a dev server
//	                          and on the self-hosted stack, side by side
//	go run ./bench soak       the chaos soak (internal/harness/soak) on the stack
//
// It uses the server at TEMPORAL_ADDRESS when set, else starts a dev server.
// The worker runs in a separate process (this binary, re-executed), so what
// is measured crosses process boundaries as it does in production.
package main

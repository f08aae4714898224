package main

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/internal/sandbox"
	"github.com/durable-agents/agentloop/internal/secretenv"
	"github.com/durable-agents/agentloop/internal/temporalenv"
	"github.com/durable-agents/agentloop/llm"
)

func main() {
	protectErr := secretenv.Protect() // first: no other process of this user may read our memory or environ
	// Descriptors inherited from the launcher must not reach commands or
	// MCP servers (they may hold secrets, sockets, the launcher's files).
	fdErr := sandbox.CloseInheritedOnExec()
	f := parseFlags()
	s := setUp(f, fdErr, protectErr) // exits on what a worker cannot run without
	defer s.close()
	z := s.z.Sugar()

	aw, err := agentworker.New(s.opts)
	if err != nil {
		z.Fatal(err.Error())
	}
	if aw.SearchAttributesErr != nil {
		z.Warnw("runs will not update search attributes", "reason", aw.SearchAttributesErr.Error())
	}
	if aw.ApprovalsErr != nil {
		z.Warnw("no approvals gauge", "reason", aw.ApprovalsErr.Error())
	}
	if servers := aw.MCPServers(); servers != nil {
		z.Infow("MCP servers", "servers", servers)
	}
	version := "unversioned"
	if *f.versioning {
		version = *f.deployment + ":" + *f.buildID
	}
	z.Infow("worker starting", "temporal", temporalenv.Describe(s.clientOpts), "encryption", s.encryption(),
		"taskQueue", *f.taskQueue, "toolQueue", *f.toolQueue, "hostID", *f.hostID, "hostIDFrom", s.hostIDFrom, "hostQueue", *f.hostQueue, "version", version,
		"store", s.st.Name(), "storeId", s.st.ID(), "sandbox", s.opts.Sandbox.Describe(), "telemetry", s.opts.Telemetry.Describe(), "providers", append([]string{llm.ScriptedProviderName}, s.providers...))
	if err := aw.Start(); err != nil {
		z.Fatal("start worker: " + err.Error())
	}
	if *f.versioning && *f.setCurrent {
		go func() {
			set, err := agentclient.SetCurrentIfNone(context.Background(), s.opts.Client, *f.deployment, *f.buildID)
			switch {
			case err != nil:
				z.Warnw("cannot make this version current", "reason", err.Error())
			case set:
				z.Infow("the deployment had no current version: this one is now current", "version", version)
			}
		}()
	}
	sig := <-worker.InterruptCh()
	z.Infow("stopping: no new tasks; activities in flight may finish", "signal", fmt.Sprint(sig), "within", f.stopTimeout.String())
	aw.Shutdown(*f.stopTimeout)
	flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.opts.Telemetry.Shutdown(flushCtx); err != nil {
		z.Warnw("telemetry shutdown", "reason", err.Error())
	}
	z.Info("stopped")
}

package agentclient

import (
	"context"
	"time"

	"github.com/durable-agents/agentloop/store"
)

// LeaseRefresh is how often a live watcher renews the workflow's watch
// lease in the content store; a lease lasts three times as long, so a
// watcher that goes away stops the worker's streaming within that long.
var LeaseRefresh = 15 * time.Second

// holdLease writes the workflow's watch lease now and then every
// LeaseRefresh until ctx ends. A store that keeps no leases, or a failed
// write, costs the watcher its deltas (the worker streams for liveness
// only), never the watch.
func holdLease(ctx context.Context, st store.Blobs, workflowID string) {
	leases, ok := st.(store.WatchLeases)
	if !ok {
		return
	}
	mark := func() { _ = leases.MarkWatched(ctx, workflowID, time.Now().Add(3*LeaseRefresh)) }
	mark()
	go func() {
		for sleep(ctx, LeaseRefresh) == nil {
			mark()
		}
	}()
}

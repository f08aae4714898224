package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/durable-agents/agentloop/store"
)

var (
	storeOnce sync.Once
	benchSt   *store.Store
)

// benchStoreDir is where the benchmark's workers and readers keep content:
// one directory per benchmark process, which its worker processes inherit
// through AGENTLOOP_BENCH_STORE.
func benchStoreDir() string {
	if d := os.Getenv("AGENTLOOP_BENCH_STORE"); d != "" {
		return d
	}
	d := filepath.Join(os.TempDir(), fmt.Sprintf("agentloop-bench-content-%d", os.Getpid()))
	_ = os.Setenv("AGENTLOOP_BENCH_STORE", d)
	return d
}

// benchStore opens the benchmark's content store.
func benchStore() *store.Store {
	storeOnce.Do(func() {
		var err error
		if benchSt, err = store.Open(benchStoreDir(), store.Options{}); err != nil {
			panic(fmt.Sprintf("content store: %v", err))
		}
	})
	return benchSt
}

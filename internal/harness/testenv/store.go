package testenv

import (
	"os"
	"sync"
	"testing"

	"github.com/durable-agents/agentloop/store"
)

var (
	storeOnce sync.Once
	storeDir  string
	storeErr  error
)

// Store returns the content store the test binary's workers and readers
// share: a directory on disk, removed when Main ends.
func Store(t testing.TB) *store.Store {
	t.Helper()
	storeOnce.Do(func() {
		if storeDir, storeErr = os.MkdirTemp("", "agentloop-content-"); storeErr != nil {
			return
		}
		sharedStore, storeErr = store.Open(storeDir, store.Options{})
	})
	if storeErr != nil {
		t.Fatalf("content store: %v", storeErr)
	}
	return sharedStore
}

var sharedStore *store.Store

// StoreDir is the directory of Store's content.
func StoreDir() string { return storeDir }

func removeStore() {
	if storeDir != "" {
		_ = os.RemoveAll(storeDir)
	}
}

// resolve is the shared store when a test opened it, else nil.
func resolver() store.Blobs {
	if sharedStore == nil {
		return nil
	}
	return sharedStore
}

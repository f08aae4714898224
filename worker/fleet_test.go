package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A directory store the worker was not given explicitly is refused when
// the frontend is not on loopback, with a message that says why and what
// to pass; an explicit directory, an S3 store or a loopback frontend pass.
func TestDirectoryStoreRefusedForARemoteFrontend(t *testing.T) {
	const dir = "/home/me/.local/state/agentloop/content"
	err := checkStoreForFleet("temporal.example.com:7233", dir, false)
	require.ErrorContains(t, err, "not on loopback")
	require.ErrorContains(t, err, "-store s3://bucket/prefix?endpoint=host:port")
	require.ErrorContains(t, err, "pass it explicitly: -store "+dir)
	require.Error(t, checkStoreForFleet("10.0.0.5:7233", "dir:content", false))

	require.NoError(t, checkStoreForFleet("temporal.example.com:7233", dir, true), "given explicitly")
	require.NoError(t, checkStoreForFleet("temporal.example.com:7233", "s3://bucket/p?endpoint=minio:9000", false))
	for _, hp := range []string{"localhost:7233", "127.0.0.1:7233", "[::1]:7233", "127.0.0.2:7233"} {
		require.NoError(t, checkStoreForFleet(hp, dir, false), hp)
	}
}

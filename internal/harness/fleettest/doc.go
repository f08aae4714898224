// Package fleettest runs a fleet of agentloop workers as separate hosts on
// one machine, for tests of what a fleet does to runs: N processes of the
// real worker binary (built once from ./worker), each with its own
// -host-id, tool journal, log file and environment (so a test can leave a
// provider's key out on one), against one Temporal dev server, one shared
// S3-compatible content store (internal/harness/s3server) and one model server
// speaking the OpenAI Chat Completions streaming wire format that decides
// each answer from the request alone, so any host and any attempt gets the
// same answer.
//
// model.go is the model server, host.go a worker process (started,
// stopped, killed for good with SIGKILL), fleet.go the test harness that
// puts them together. The chaos soak (internal/harness/soak) runs its workers and
// model with the same pieces. hosts_test.go holds the tests of host
// affinity across hosts that come and go, drift_test.go config drift,
// rows_test.go three more rows of issue 26: hosts with different stores,
// the sweep of a session's source run, and three 900 KB steers. Each test
// starts a fleet of its own (server, store, model, hosts), so they run in
// parallel: they mostly wait (a host's 90 s start timeout, a host's queue
// falling silent), and one after another they were the longest package of
// scripts/test. The sweep row alone runs serially: it sets the store's
// credentials in the environment.
package fleettest

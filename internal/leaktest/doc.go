// Package leaktest holds end-to-end tests that a worker's secrets (model
// provider API keys, Temporal credentials, codec keys) never reach a run's
// history, its failure messages, its Queries, its result, the commands its
// tools run, or the worker's logs. It has no code of its own.
package leaktest

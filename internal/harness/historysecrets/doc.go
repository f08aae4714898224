// Package historysecrets holds end-to-end tests, on a real Temporal server,
// that a run's data and the worker's secrets stay where they belong, in
// history above all:
//
//   - with the payload codec, the server's raw history holds no prompt,
//     argument, tool output, partial result, steering message, failure
//     message or answer in clear (encryption_test.go);
//   - a model provider's API key planted in the worker's environment never
//     reaches a run's history, its failure messages, its Queries, its result
//     or the worker's logs, even when the provider's 401 quotes it, and the
//     commands the bash tool runs do not inherit it (leak_test.go).
//
// It has no code of its own.
package historysecrets

// Package fakeprovider is a local HTTP server that speaks whatever wire
// format its scripted replies hold: the provider tests and the end-to-end
// workflow tests point the real provider SDKs at it. It answers each call
// with the next reply and records what the SDK sent.
package fakeprovider

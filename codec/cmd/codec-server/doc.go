// Command codec-server decrypts agentloop payloads for the Temporal Web UI
// and CLI (Temporal's remote codec protocol: POST /encode and /decode).
//
//	AGENTLOOP_CODEC_KEYS="k2:base64,k1:base64" AGENTLOOP_CODEC_TOKEN=secret codec-server
//	codec-server -new-key k3     # print a new key to put first in AGENTLOOP_CODEC_KEYS
//
// It refuses to start without AGENTLOOP_CODEC_TOKEN unless
// -allow-unauthenticated is given, since anyone who reaches it can decrypt
// every payload. With -store (default $AGENTLOOP_STORE) it also shows the
// content that history holds as stubs (tool output, long answers), read
// from the workers' content store; it then runs without keys too.
//
// With -store it also serves GET /blobs/{namespace}/{workflowId}/{sha256},
// behind the same token: the content behind one stub, as JSON bytes, for
// clients in any language (docs/api.md, "Stored content over HTTP"). It
// serves the namespaces of -namespace (comma-separated) and only what the
// named workflow stored there: another workflow's or namespace's hash is a
// 404, a namespace not served a 403.
package main

// Package codec encrypts Temporal payloads with AES-256-GCM, so prompts,
// transcripts, tool arguments and tool output are ciphertext in Temporal's
// database, its visibility store and the Web UI (unless it is pointed at the
// codec server).
//
// The worker and every client of a run use the same key ring: the first key
// encrypts, every key decrypts, and the key's id travels in each payload's
// metadata, so keys rotate by putting a new key first and keeping the old
// ones until no open run or retained history needs them. The format is the
// one of Temporal's encryption samples: metadata encoding "binary/encrypted"
// and "encryption-key-id", data the 12-byte nonce followed by the sealed
// protobuf of the original payload. Payloads without that encoding (written
// before encryption was turned on) pass through unchanged.
//
// The codec server (server.go, cmd/codec-server) serves Temporal's remote
// codec protocol and, given a BlobReader, the content behind stubs at
// GET /blobs/{namespace}/{workflowId}/{sha256} (blobs.go).
package codec

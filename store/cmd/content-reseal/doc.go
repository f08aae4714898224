// Command content-reseal re-seals every blob of the content store with the
// active (first) key of the codec key ring, so that an old key can be
// dropped after a rotation (docs/operations.md, "Encryption"). It reads the
// ring as the worker does (AGENTLOOP_CODEC_KEYS or AGENTLOOP_CODEC_KEYS_FILE:
// the new key first, the old ones after it). It is idempotent and so
// resumable: blobs already sealed with the active key are skipped. -dry-run
// lists what it would rewrite and rewrites nothing.
package main

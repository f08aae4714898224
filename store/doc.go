// Package store keeps large content out of Temporal's history: tool
// results, model answers and transcript segments are stored once, by the
// SHA-256 of their bytes, and history holds agent.BlobRef references.
//
// Start with content.go (Blobs, and the helpers that replace large content
// by stubs and back, or by a "[content lost: ...]" placeholder when a blob
// is gone) and store.go (Store: New, Open, Put, Get). A Store keeps its
// blobs in a Backend (backend.go): a directory (dir.go) or an
// S3-compatible bucket (s3.go), named by a spec (spec.go). Blobs are
// gzipped and, given codec keys, encrypted (format.go). Each is stored
// under its Temporal namespace and the workflow id of the run that wrote it
// (scope.go: the key layout, and the older one without the namespace that
// reads still fall back to), and Sweep (sweep.go) deletes the content of
// one namespace's workflows Temporal no longer has; cmd/content-sweep runs
// it. Reseal (reseal.go) seals stored blobs again with the active key after
// a key rotation; cmd/content-reseal runs it. A store's id (id.go) tells two
// stores apart, so a worker of the wrong store refuses a run's activities.
// Errors (errors.go) separate what a retry can fix from what it cannot.
// BlobServer (blobserver.go) reads blobs by namespace, workflow id and hash
// alone (Store.Read) for the codec server's GET /blobs/.
package store

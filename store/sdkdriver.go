package store

import (
	"fmt"
	"strconv"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/agent"
)

// SDKDriver is the Temporal Go SDK's own external storage
// (client.Options.ExternalStorage, experimental in v1.51) over this store:
// every payload over the SDK's size threshold is stored whole and history
// holds a claim. The project does not use it by default: measured on the
// same 48 KB-output session (go run ./bench content -compare), it stores a
// tool output once as the execute result and again inside every model
// turn's input that carries it, and the workflow still holds all content in
// memory; stubs for large blocks (Offload*) store each output once and keep
// the workflow small. It is kept for that measurement and for users who
// want a payload-level safety net on their own clients.
type SDKDriver struct{ S *Store }

var _ converter.StorageDriver = SDKDriver{}

// Name implements converter.StorageDriver.
func (d SDKDriver) Name() string { return "agentloop-content" }

// Type implements converter.StorageDriver.
func (d SDKDriver) Type() string { return "agentloop-content" }

// Store implements converter.StorageDriver: each payload is stored under
// the workflow's scope by the hash of its encoded bytes.
func (d SDKDriver) Store(ctx converter.StorageDriverStoreContext, payloads []*commonpb.Payload) ([]converter.StorageDriverClaim, error) {
	scope := ""
	if w, ok := ctx.Target.(converter.StorageDriverWorkflowInfo); ok {
		scope = w.WorkflowID
	}
	claims := make([]converter.StorageDriverClaim, len(payloads))
	for i, p := range payloads {
		data, err := p.Marshal()
		if err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
		ref, err := d.S.Put(ctx.Context, scope, data)
		if err != nil {
			return nil, err
		}
		claims[i] = converter.StorageDriverClaim{ClaimData: map[string]string{
			"sha256": ref.SHA256, "size": strconv.Itoa(ref.Size), "scope": ref.Scope,
		}}
	}
	return claims, nil
}

// Retrieve implements converter.StorageDriver.
func (d SDKDriver) Retrieve(ctx converter.StorageDriverRetrieveContext, claims []converter.StorageDriverClaim) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(claims))
	for i, c := range claims {
		size, _ := strconv.Atoi(c.ClaimData["size"])
		ref := agent.BlobRef{SHA256: c.ClaimData["sha256"], Size: size, Scope: c.ClaimData["scope"]}
		data, err := d.S.Get(ctx.Context, ref)
		if err != nil {
			return nil, err
		}
		var p commonpb.Payload
		if err := p.Unmarshal(data); err != nil {
			return nil, &ContentError{Ref: ref, Err: fmt.Errorf("%w: not a payload", ErrCorrupt)}
		}
		out[i] = &p
	}
	return out, nil
}

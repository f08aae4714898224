package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/durable-agents/agentloop/codec"
)

// BlobServer is the codec server's codec.BlobReader: the content the runs
// of a fixed set of namespaces stored, read through a Store per namespace
// over one backend, exactly as the workers wrote it (keys, sealing, cache).
type BlobServer struct {
	stores map[string]*Store
}

var _ codec.BlobReader = (*BlobServer)(nil)

// NewBlobServer serves the content of namespaces (at least one) from b;
// o's Namespace is ignored, its LegacyOwner applies to the first.
func NewBlobServer(b Backend, namespaces []string, o Options) (*BlobServer, error) {
	if len(namespaces) == 0 {
		return nil, errors.New("content store: no namespace to serve")
	}
	bs := &BlobServer{stores: map[string]*Store{}}
	for i, ns := range namespaces {
		if ns == "" {
			return nil, errors.New("content store: an empty namespace name")
		}
		opts := o
		opts.Namespace, opts.LegacyOwner = ns, o.LegacyOwner && i == 0
		s, err := New(b, opts)
		if err != nil {
			return nil, err
		}
		bs.stores[ns] = s
	}
	return bs, nil
}

// Store is the store of namespace, nil when it is not served.
func (bs *BlobServer) Store(namespace string) *Store { return bs.stores[namespace] }

// ReadBlob implements codec.BlobReader with Store.Read: only what the run
// workflowID of namespace stored is found.
func (bs *BlobServer) ReadBlob(ctx context.Context, namespace, workflowID, sha256 string) ([]byte, error) {
	s, ok := bs.stores[namespace]
	if !ok {
		return nil, codec.ErrNamespaceNotServed
	}
	data, err := s.Read(ctx, workflowID, sha256)
	if errors.Is(err, ErrMissing) {
		return nil, fmt.Errorf("%w: %w", codec.ErrNoBlob, err)
	}
	return data, err
}

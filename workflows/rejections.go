package workflows

import (
	"context"

	protocolpb "go.temporal.io/api/protocol/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// An Update's rejection carries the rejected request back to the server
// whole (the SDK sets Rejection.RejectedRequest). The server checks each
// message against its blob size limit (2 MB by default, and on Temporal
// Cloud) and terminates the workflow when one is over (server 1.29:
// "Message type temporal.api.update.v1.Rejection exceeds size limit"). So a
// 3 MB steering message, which the validators refuse, would end the run
// whenever it reached the worker in a normal workflow task, as it does when
// it arrives beside an activity's completion. The server reads a rejected
// request only to resurrect an Update it lost, which a request without its
// arguments still does.

// maxRejectionBytes is the size above which a rejection loses its
// request's arguments: far below the limit, far above any refusal text.
const maxRejectionBytes = 256 << 10

// TrimRejections is a gRPC client interceptor for a worker's connection:
// in a completed workflow task it drops the arguments of every rejected
// Update request larger than maxRejectionBytes. Add it with
// grpc.WithChainUnaryInterceptor to client.Options.ConnectionOptions.DialOptions.
func TrimRejections(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if r, ok := req.(*workflowservice.RespondWorkflowTaskCompletedRequest); ok {
		trimRejections(r.GetMessages())
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

func trimRejections(msgs []*protocolpb.Message) {
	for _, m := range msgs {
		body := m.GetBody()
		if body == nil || !body.MessageIs(&updatepb.Rejection{}) || proto.Size(body) <= maxRejectionBytes {
			continue
		}
		var rej updatepb.Rejection
		if body.UnmarshalTo(&rej) != nil {
			continue
		}
		if in := rej.GetRejectedRequest().GetInput(); in != nil {
			in.Args = nil
		}
		if trimmed, err := anypb.New(&rej); err == nil {
			m.Body = trimmed
		}
	}
}

// WorkerDialOptions are the gRPC options a worker's client connection
// needs (TrimRejections).
func WorkerDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(TrimRejections)}
}

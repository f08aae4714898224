package agentclient

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// SetCurrentIfNone makes buildID the current version of a worker deployment
// that has none, which is a first deploy: until a deployment has a current
// version, new runs wait for unversioned workers. A deployment with a
// current version is left alone: making a new build current is a person's
// decision (README, "Deploying a change"). It waits up to a minute for the
// version to be known to the server, which learns of it from the worker's
// first polls, and reports whether it made the version current.
func SetCurrentIfNone(ctx context.Context, c client.Client, deployment, buildID string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	h := c.WorkerDeploymentClient().GetHandle(deployment)
	for {
		desc, err := h.Describe(ctx, client.WorkerDeploymentDescribeOptions{})
		if err == nil {
			if desc.Info.RoutingConfig.CurrentVersion != nil {
				return false, nil
			}
			_, err = h.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{
				BuildID: buildID, ConflictToken: desc.ConflictToken,
			})
			if err == nil {
				return true, nil
			}
		}
		var notFound *serviceerror.NotFound
		var precondition *serviceerror.FailedPrecondition
		if !errors.As(err, &notFound) && !errors.As(err, &precondition) {
			return false, err
		}
		select {
		case <-ctx.Done():
			return false, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

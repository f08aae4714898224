package workflows

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"runtime/debug"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Worker Deployment Versioning. Every worker belongs to a deployment
// (DeploymentName unless the worker says otherwise) and a version of it,
// the build ID of its binary. The server sends each workflow task to the
// version its workflow belongs to:
//
//   - AgentLoop runs are pinned (VersioningBehaviorPinned): a run stays on
//     the build that started it until it ends, so a deploy never replays a
//     run's history on new code; the old build drains.
//   - AgentSession is auto-upgrade (VersioningBehaviorAutoUpgrade): a
//     session lives for weeks, longer than any build, so its next workflow
//     task goes to the current version; there the session continues as new
//     at its next seam (between two turns or while idle), so from then on
//     its history is the new build's alone (session.go, movedBuild). Every
//     change to session code that alters the commands of a running history
//     goes behind workflow.GetVersion, which the replay corpus checks.
//
// Server 1.29.1 (the dev server of Temporal CLI 1.5.1, and the project's
// real server) has no upgrade-on-continue-as-new for pinned workflows: its
// API (go.temporal.io/api v1.53.0) lacks the continue-as-new command's
// initial_versioning_behavior, and a pinned run's continuation inherits
// the pinned version (service/history/workflow/mutable_state_impl.go), so a
// pinned session would never leave its build. Hence auto-upgrade.

// DeploymentName is the worker deployment of the agent loop's workers.
const DeploymentName = "agentloop"

// Versioning behaviours of the two workflow types.
const (
	AgentLoopVersioning = workflow.VersioningBehaviorPinned
	SessionVersioning   = workflow.VersioningBehaviorAutoUpgrade
)

// DeploymentOptions opts a worker into Worker Deployment Versioning as
// build buildID of deployment name.
func DeploymentOptions(name, buildID string) worker.DeploymentOptions {
	return worker.DeploymentOptions{
		UseVersioning: true,
		Version:       worker.WorkerDeploymentVersion{DeploymentName: name, BuildID: buildID},
	}
}

// BinaryBuildID is the build ID of the running binary: its VCS revision
// (with "-dirty" when built from a modified tree) when Go recorded one,
// else the first 12 bytes of the SHA-256 of the executable, so two builds
// of different code never share an ID.
func BinaryBuildID() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		var rev, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if modified == "true" {
				// A dirty tree's revision says little: add the binary's hash.
				return rev + "-dirty-" + executableHash()[:8]
			}
			return rev
		}
	}
	return executableHash()
}

func executableHash() string {
	path, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown"
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

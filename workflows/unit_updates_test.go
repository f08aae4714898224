package workflows_test

import (
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
)

// The fast layer's Updates: sent as a client sends them, answered by the
// validator (a refusal) or the handler; a test ends with every Update
// answered (newUnitRun checks).

// update sends an Update and requires the answer the test expects: an
// empty wantErr means success, else the Update fails (refused by its
// validator or failed by its handler, both errors to the client) with an
// error containing wantErr.
func (r *unitRun) update(name string, wantErr string, arg any) {
	r.t.Helper()
	r.updateWithID("", name, wantErr, arg)
}

// updateWithID is update with the Update ID a client gives it (a client
// that retries sends the same one).
func (r *unitRun) updateWithID(id, name string, wantErr string, arg any) {
	r.t.Helper()
	r.unanswered++
	answered := func(err error) {
		r.unanswered--
		switch {
		case wantErr == "" && err != nil:
			r.t.Errorf("update %s failed: %v", name, err)
		case wantErr != "" && err == nil:
			r.t.Errorf("update %s succeeded, want an error containing %q", name, wantErr)
		case wantErr != "":
			require.ErrorContains(r.t, err, wantErr)
		}
	}
	r.env.UpdateWorkflow(name, id, &testsuite.TestUpdateCallback{
		OnReject:   answered,
		OnAccept:   func() {},
		OnComplete: func(_ any, err error) { answered(err) },
	}, arg)
}

// updateResultOf sends an Update that must succeed and hands its answer to
// check.
func updateResultOf[T any](r *unitRun, name string, arg any, check func(T)) {
	r.t.Helper()
	updateResultWithID(r, "", name, arg, check)
}

// updateResultWithID is updateResultOf with a client's Update ID.
func updateResultWithID[T any](r *unitRun, id, name string, arg any, check func(T)) {
	r.t.Helper()
	r.unanswered++
	r.env.UpdateWorkflow(name, id, &testsuite.TestUpdateCallback{
		OnReject: func(err error) {
			r.unanswered--
			r.t.Errorf("update %s refused: %v", name, err)
		},
		OnAccept: func() {},
		OnComplete: func(v any, err error) {
			r.unanswered--
			if err != nil {
				r.t.Errorf("update %s failed: %v", name, err)
				return
			}
			out, ok := v.(T)
			if !ok {
				r.t.Errorf("update %s answered %T, want %T", name, v, out)
				return
			}
			check(out)
		},
	}, arg)
}

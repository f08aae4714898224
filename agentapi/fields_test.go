package agentapi

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fields an Update argument's JSON may have are the ones
// encoding/json would fill: tag names, else field names, matched
// case-insensitively, embedded structs' included, "-" and unexported ones
// not. Anything else is the first unknown key in sorted order.
func TestUnknownKeyMatchesEncodingJSON(t *testing.T) {
	type inner struct {
		Deep string `json:"deep"`
	}
	type arg struct {
		inner
		Tagged  string `json:"tagged,omitempty"`
		Plain   string
		Skipped string `json:"-"`
		hidden  string
	}
	typ := reflect.TypeFor[arg]()
	for b, want := range map[string]string{
		`{"tagged": "x", "Plain": "y", "deep": "z"}`: "",
		`{"TAGGED": "x", "plain": "y", "Deep": "z"}`: "",
		`{"Skipped": "x"}`:                           "Skipped",
		`{"hidden": "x"}`:                            "hidden",
		`{"zeta": 1, "alpha": 2, "tagged": "x"}`:     "alpha",
		`"not an object"`:                            "",
		`null`:                                       "",
	} {
		require.Equal(t, want, UnknownKey([]byte(b), typ), b)
	}
	_ = arg{}.hidden
}

// The argument types decode as before (their handlers see what they saw)
// and remember the field they lack; workflows/fields_test.go has the
// arguments that are not types of their own.
func TestUpdateArgumentsDecodeAsBefore(t *testing.T) {
	var p PromptRequest
	require.NoError(t, json.Unmarshal([]byte(`{"text": "hi", "promt": "x"}`), &p))
	require.Equal(t, "hi", p.Text)
	require.EqualError(t, p.FieldError(), `unknown field "promt": a prompt has text, images or messages`)

	var s SettingRequest
	require.Error(t, json.Unmarshal([]byte(`{"level": 3}`), &s), "a wrong type still fails decoding, as before")
}

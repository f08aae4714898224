package agentapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/durable-agents/agentloop/agent"
)

// A run's input is decoded by the SDK before the workflow's code runs, so
// a malformed one cannot fail its decoding without failing the workflow
// task again and again. The inputs' UnmarshalJSON never fails instead: it
// records what is wrong (DecodeErr) and the first field the input lacks
// (UnknownField), and the workflow fails the run at once with a
// non-retryable ErrInvalidInput that says so.

// UnmarshalJSON never fails: a malformed input is recorded, and the run
// fails at once with a non-retryable InvalidInput that says what is wrong,
// rather than with the SDK's decode error.
func (in *AgentLoopInput) UnmarshalJSON(b []byte) error {
	type plain AgentLoopInput
	p, unknown, err := decodePlain[plain](b)
	if err != nil {
		*in = AgentLoopInput{decodeErr: DecodeError(err)}
		return nil
	}
	*in = AgentLoopInput(p)
	in.unknownField = unknown
	return nil
}

// DecodeErr is why the input's JSON could not be decoded, "" when it was.
func (in AgentLoopInput) DecodeErr() string { return in.decodeErr }

// UnknownField is the first field of the input's JSON that AgentLoopInput
// does not have, "" when there is none.
func (in AgentLoopInput) UnknownField() string { return in.unknownField }

// UnmarshalJSON never fails, as AgentLoopInput's.
func (in *SessionInput) UnmarshalJSON(b []byte) error {
	type plain SessionInput
	p, unknown, err := decodePlain[plain](b)
	if err != nil {
		*in = SessionInput{decodeErr: DecodeError(err)}
		return nil
	}
	*in = SessionInput(p)
	in.unknownField = unknown
	return nil
}

// DecodeErr is why the input's JSON could not be decoded, "" when it was.
func (in SessionInput) DecodeErr() string { return in.decodeErr }

// UnknownField is the first field of the input's JSON that SessionInput
// does not have, "" when there is none.
func (in SessionInput) UnknownField() string { return in.unknownField }

// DecodeError says what is wrong with an input's JSON in the input's
// terms: the JSON field and the JSON it wants ("model: got a JSON string,
// want a JSON object"), never a Go type.
func DecodeError(err error) string {
	var hookErr *agent.HookError
	if errors.As(err, &hookErr) {
		return hookErr.Error()
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := strings.TrimPrefix(typeErr.Field, "LoopConfig.")
		if field == "" {
			return fmt.Sprintf("the input must be a JSON object, not a JSON %s", typeErr.Value)
		}
		return fmt.Sprintf("%s: got a JSON %s, want %s", field, typeErr.Value, jsonKind(typeErr.Type))
	}
	return "not valid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
}

// jsonKind names the JSON a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another JSON value"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.String:
		return "a JSON string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a JSON number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.String {
			return "a JSON array of strings"
		}
		return "a JSON array"
	case reflect.Struct, reflect.Map:
		return "a JSON object"
	}
	return "another JSON value"
}

// decodePlain decodes b into a P, the plain copy (type plain T) that an
// UnmarshalJSON of T decodes into so as not to call itself, and says the
// first field of b that P does not have ("" when none) beside json's error.
func decodePlain[P any](b []byte) (p P, unknown string, err error) {
	err = json.Unmarshal(b, &p)
	return p, unknownField(b, new(P)), err
}

// unknownField is the first field of the JSON object b that v (a pointer
// to a struct without UnmarshalJSON) does not have, or "".
func unknownField(b []byte, v any) string {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	err := d.Decode(v)
	if err == nil {
		return ""
	}
	name, ok := strings.CutPrefix(err.Error(), `json: unknown field "`)
	if !ok {
		return ""
	}
	return strings.TrimSuffix(name, `"`)
}

// DecodeInputStrict decodes a run's or a session's input (a pointer to
// AgentLoopInput or SessionInput) as a client checks it before sending:
// an unknown field, or a value of the wrong type, is an error that names
// the JSON field.
func DecodeInputStrict(b []byte, v any) error {
	var err error
	switch in := v.(type) {
	case *AgentLoopInput:
		err = json.Unmarshal(b, in)
		if in.decodeErr != "" {
			return errors.New(in.decodeErr)
		}
		if in.unknownField != "" {
			return fmt.Errorf("unknown field %q", in.unknownField)
		}
	case *SessionInput:
		err = json.Unmarshal(b, in)
		if in.decodeErr != "" {
			return errors.New(in.decodeErr)
		}
		if in.unknownField != "" {
			return fmt.Errorf("unknown field %q", in.unknownField)
		}
	default:
		return fmt.Errorf("DecodeInputStrict: %T is not an input", v)
	}
	if err != nil {
		return errors.New(DecodeError(err))
	}
	return nil
}

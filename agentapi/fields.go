package agentapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Unknown fields in Update arguments. An Update's argument decodes into
// its Go type, which drops fields it does not have, so {"promt": "..."}
// would prompt with nothing and {"levle": "high"} set nothing. Each
// argument type remembers the first field its JSON object had that the
// type lacks, and the validators refuse it, naming the field and the ones
// the Update takes, as a run refuses its input (decode.go). A
// validator that refuses leaves nothing in history, and a replayed Update
// runs its handler without its validator: the handlers ignore the field,
// as they did before, so the histories of Updates accepted before this
// change replay as they ran.

// UnknownKey is the first key, in sorted order, of the JSON object b that
// names no field of the struct type t (as encoding/json matches them:
// the json tag's name, else the field's, case-insensitively; embedded
// structs' fields included), or "" when there is none or b is not an
// object.
func UnknownKey(b []byte, t reflect.Type) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) != nil {
		return ""
	}
	names := jsonNames(t)
	var unknown []string
	for k := range obj {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, k) }) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return ""
	}
	slices.Sort(unknown)
	return unknown[0]
}

// jsonNames lists the JSON names of struct type t's fields.
func jsonNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			names = append(names, jsonNames(f.Type)...)
		case !f.IsExported():
		case name != "":
			names = append(names, name)
		default:
			names = append(names, f.Name)
		}
	}
	return names
}

// UnknownFieldError is a validator's refusal of an Update whose argument
// had field unknown; what names the argument ("a prompt").
func UnknownFieldError(unknown, what string, t reflect.Type) error {
	if unknown == "" {
		return nil
	}
	names := jsonNames(t)
	has := names[len(names)-1]
	if len(names) > 1 {
		has = strings.Join(names[:len(names)-1], ", ") + " or " + has
	}
	return fmt.Errorf("unknown field %q: %s has %s", unknown, what, has)
}

// DecodeChecked decodes b into v, a pointer to a struct type without an
// UnmarshalJSON of its own, and returns the first field of b that v's type
// lacks.
func DecodeChecked(b []byte, v any) (string, error) {
	if err := json.Unmarshal(b, v); err != nil {
		return "", err
	}
	return UnknownKey(b, reflect.TypeOf(v).Elem()), nil
}

// The four Update arguments below decode through a plain copy of their
// type, which lacks the UnmarshalJSON that would call itself.

// UnmarshalJSON decodes a prompt and remembers an unknown field.
func (r *PromptRequest) UnmarshalJSON(b []byte) error {
	type plain PromptRequest
	*r = PromptRequest{}
	var err error
	r.unknown, err = DecodeChecked(b, (*plain)(r))
	return err
}

// FieldError is the validator's refusal of a prompt with a field it does not
// have, nil when it has none.
func (r PromptRequest) FieldError() error {
	return UnknownFieldError(r.unknown, "a prompt", reflect.TypeOf(r))
}

// UnmarshalJSON decodes a setting and remembers an unknown field.
func (r *SettingRequest) UnmarshalJSON(b []byte) error {
	type plain SettingRequest
	*r = SettingRequest{}
	var err error
	r.unknown, err = DecodeChecked(b, (*plain)(r))
	return err
}

// FieldError is the validator's refusal of a setting with a field it does not
// have, nil when it has none.
func (r SettingRequest) FieldError() error {
	return UnknownFieldError(r.unknown, "a setting", reflect.TypeOf(r))
}

// UnmarshalJSON decodes a compact request and remembers an unknown field.
func (r *CompactRequest) UnmarshalJSON(b []byte) error {
	type plain CompactRequest
	*r = CompactRequest{}
	var err error
	r.unknown, err = DecodeChecked(b, (*plain)(r))
	return err
}

// FieldError is the validator's refusal of a compact request with a field it
// does not have, nil when it has none.
func (r CompactRequest) FieldError() error {
	return UnknownFieldError(r.unknown, "a compact request", reflect.TypeOf(r))
}

// UnmarshalJSON decodes an approval and remembers an unknown field.
func (r *ApproveRequest) UnmarshalJSON(b []byte) error {
	type plain ApproveRequest
	*r = ApproveRequest{}
	var err error
	r.unknown, err = DecodeChecked(b, (*plain)(r))
	return err
}

// FieldError is the validator's refusal of an approval with a field it does
// not have, nil when it has none.
func (r ApproveRequest) FieldError() error {
	return UnknownFieldError(r.unknown, "an approval", reflect.TypeOf(r))
}

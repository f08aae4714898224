package workflows

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
)

// Unknown fields in Update arguments. An Update's argument decodes into
// its Go type, which drops fields it does not have, so {"promt": "..."}
// would prompt with nothing and {"levle": "high"} set nothing. Each
// argument type remembers the first field its JSON object had that the
// type lacks, and the validators refuse it, naming the field and the ones
// the Update takes, as a run refuses its input (decodeerror.go). A
// validator that refuses leaves nothing in history, and a replayed Update
// runs its handler without its validator: the handlers ignore the field,
// as they did before, so the histories of Updates accepted before this
// change replay as they ran.

// unknownKey is the first key, in sorted order, of the JSON object b that
// names no field of the struct type t (as encoding/json matches them:
// the json tag's name, else the field's, case-insensitively; embedded
// structs' fields included), or "" when there is none or b is not an
// object.
func unknownKey(b []byte, t reflect.Type) string {
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

// unknownFieldError is a validator's refusal of an Update whose argument
// had field unknown; what names the argument ("a prompt").
func unknownFieldError(unknown, what string, t reflect.Type) error {
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

// decodeChecked decodes b into v, a pointer to a struct type without an
// UnmarshalJSON of its own, and returns the first field of b that v's type
// lacks.
func decodeChecked(b []byte, v any) (string, error) {
	if err := json.Unmarshal(b, v); err != nil {
		return "", err
	}
	return unknownKey(b, reflect.TypeOf(v).Elem()), nil
}

// UnmarshalJSON decodes a prompt and remembers an unknown field.
func (r *PromptRequest) UnmarshalJSON(b []byte) error {
	type plain PromptRequest
	var p plain
	unknown, err := decodeChecked(b, &p)
	*r = PromptRequest(p)
	r.unknown = unknown
	return err
}

func (r PromptRequest) unknownField() error {
	type plain PromptRequest
	return unknownFieldError(r.unknown, "a prompt", reflect.TypeFor[plain]())
}

// UnmarshalJSON decodes a setting and remembers an unknown field.
func (r *SettingRequest) UnmarshalJSON(b []byte) error {
	type plain SettingRequest
	var p plain
	unknown, err := decodeChecked(b, &p)
	*r = SettingRequest(p)
	r.unknown = unknown
	return err
}

func (r SettingRequest) unknownField() error {
	type plain SettingRequest
	return unknownFieldError(r.unknown, "a setting", reflect.TypeFor[plain]())
}

// UnmarshalJSON decodes a compact request and remembers an unknown field.
func (r *CompactRequest) UnmarshalJSON(b []byte) error {
	type plain CompactRequest
	var p plain
	unknown, err := decodeChecked(b, &p)
	*r = CompactRequest(p)
	r.unknown = unknown
	return err
}

func (r CompactRequest) unknownField() error {
	type plain CompactRequest
	return unknownFieldError(r.unknown, "a compact request", reflect.TypeFor[plain]())
}

// UnmarshalJSON decodes an approval and remembers an unknown field.
func (r *ApproveRequest) UnmarshalJSON(b []byte) error {
	type plain ApproveRequest
	var p plain
	unknown, err := decodeChecked(b, &p)
	*r = ApproveRequest(p)
	r.unknown = unknown
	return err
}

func (r ApproveRequest) unknownField() error {
	type plain ApproveRequest
	return unknownFieldError(r.unknown, "an approval", reflect.TypeFor[plain]())
}

// messageArg is the message a steer or follow-up Update carries.
type messageArg struct {
	agent.Message
	unknown string
}

func (m *messageArg) UnmarshalJSON(b []byte) error {
	err := json.Unmarshal(b, &m.Message)
	m.unknown = unknownKey(b, reflect.TypeFor[agent.Message]())
	return err
}

func (m messageArg) unknownField() error {
	return unknownFieldError(m.unknown, "a message", reflect.TypeFor[agent.Message]())
}

// budgetArg is the budget a setBudget Update carries.
type budgetArg struct {
	agent.Budget
	unknown string
}

func (b *budgetArg) UnmarshalJSON(data []byte) error {
	unknown, err := decodeChecked(data, &b.Budget)
	b.unknown = unknown
	return err
}

func (b budgetArg) unknownField() error {
	return unknownFieldError(b.unknown, "a budget", reflect.TypeFor[agent.Budget]())
}

// abortArg is the request an abort Update carries.
type abortArg struct {
	activities.AbortRequest
	unknown string
}

func (r *abortArg) UnmarshalJSON(b []byte) error {
	unknown, err := decodeChecked(b, &r.AbortRequest)
	r.unknown = unknown
	return err
}

func (r abortArg) unknownField() error {
	return unknownFieldError(r.unknown, "an abort", reflect.TypeFor[activities.AbortRequest]())
}

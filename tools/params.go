package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"strings"
	"text/template"
)

// paramsSchema builds a tool's JSON schema from its Params struct: json tags
// give names (omitempty = optional), description tags give descriptions,
// rendered as templates over data so defaults quoted there are the code's
// constants. Numbers are "number" as in pi's TypeBox schemas. closed adds
// additionalProperties:false, which pi sets on edit only.
func paramsSchema(params any, data any, closed bool) json.RawMessage {
	s := schemaOfType(reflect.TypeOf(params), data, closed)
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a programming error in a Params struct
	}
	return b
}

// schemaNode keeps pi's key order: type, properties, required.
type schemaNode struct {
	Type                 string        `json:"type"`
	Description          string        `json:"description,omitempty"`
	Properties           *orderedProps `json:"properties,omitempty"`
	Required             []string      `json:"required,omitempty"`
	Items                *schemaNode   `json:"items,omitempty"`
	AdditionalProperties *bool         `json:"additionalProperties,omitempty"`
}

type orderedProps struct {
	names []string
	nodes map[string]*schemaNode
}

func (p *orderedProps) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, n := range p.names {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(n)
		v, err := json.Marshal(p.nodes[n])
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func schemaOfType(t reflect.Type, data any, closed bool) *schemaNode {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return &schemaNode{Type: "string"}
	case reflect.Bool:
		return &schemaNode{Type: "boolean"}
	case reflect.Int, reflect.Int64, reflect.Float64:
		return &schemaNode{Type: "number"}
	case reflect.Slice:
		return &schemaNode{Type: "array", Items: schemaOfType(t.Elem(), data, closed)}
	case reflect.Struct:
		n := &schemaNode{Type: "object", Properties: &orderedProps{nodes: map[string]*schemaNode{}}}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			prop := schemaOfType(f.Type, data, closed)
			prop.Description = renderText(f.Tag.Get("description"), data)
			n.Properties.names = append(n.Properties.names, name)
			n.Properties.nodes[name] = prop
			if !strings.Contains(opts, "omitempty") {
				n.Required = append(n.Required, name)
			}
		}
		if closed {
			f := false
			n.AdditionalProperties = &f
		}
		return n
	}
	panic(fmt.Sprintf("paramsSchema: unsupported type %s", t))
}

// renderText executes text as a template over data; tool descriptions and
// parameter descriptions quote limit constants this way.
func renderText(text string, data any) string {
	tmpl := template.Must(template.New("").Parse(text))
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, data); err != nil {
		panic(err) // a programming error in a description
	}
	return strings.TrimSpace(buf.String())
}

// decodeParams fills a Params struct from validated arguments. JSON numbers
// arrive as float64; an int field takes the integer part, as JavaScript's
// slice does with pi's fractional offsets.
func decodeParams(args map[string]any, dst any) error {
	t := reflect.TypeOf(dst).Elem()
	fixed := make(map[string]any, len(args))
	maps.Copy(fixed, args)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if x, ok := fixed[name].(float64); ok && (ft.Kind() == reflect.Int || ft.Kind() == reflect.Int64) {
			fixed[name] = math.Trunc(x)
		}
	}
	b, err := json.Marshal(fixed)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}

// detailsJSON marshals a result's details; nil stays absent (pi's
// undefined) and becomes {} on the wire.
func detailsJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

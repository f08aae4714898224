package typebox

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// jsObject is a JSON object that keeps its keys in document order, as
// JSON.parse does: TypeBox walks properties, patternProperties and
// dependencies in that order, and the order decides the order of errors.
type jsObject struct {
	keys []string
	vals map[string]any
}

func (o *jsObject) get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// parseOrdered decodes JSON into nil, bool, float64, string, []any and
// *jsObject. Like JSON.parse, a repeated key keeps its first position and its
// last value, and a number too large for a double becomes an infinity.
func parseOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseOrderedValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

func parseOrderedValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			list := []any{}
			for dec.More() {
				v, err := parseOrderedValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			return list, err
		}
		obj := &jsObject{vals: map[string]any{}}
		for dec.More() {
			keyTok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key := keyTok.(string)
			v, err := parseOrderedValue(dec)
			if err != nil {
				return nil, err
			}
			if _, seen := obj.vals[key]; !seen {
				obj.keys = append(obj.keys, key)
			}
			obj.vals[key] = v
		}
		_, err := dec.Token()
		return obj, err
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, err
		}
		return f, nil
	default:
		return t, nil
	}
}

package typebox

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/durable-agents/agentloop/internal/jsjson"
)

func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', '\u2028', '\u2029', '\ufeff':
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

func trimJSSpace(s string) string { return strings.TrimFunc(s, isJSSpace) }

var decimalLiteral = regexp.MustCompile(`^[+-]?(?:Infinity|[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?)$`)

// jsStringToNumber is JavaScript's Number(string); ok false means NaN.
func jsStringToNumber(s string) (float64, bool) {
	s = trimJSSpace(s)
	if s == "" {
		return 0, true
	}
	if len(s) > 2 && s[0] == '0' {
		base := map[byte]int{'x': 16, 'X': 16, 'o': 8, 'O': 8, 'b': 2, 'B': 2}[s[1]]
		if base != 0 {
			n, ok := new(big.Int).SetString(s[2:], base)
			if !ok || strings.ContainsAny(s[2:], "+-_") {
				return 0, false
			}
			f, _ := new(big.Float).SetInt(n).Float64()
			return f, true
		}
	}
	if !decimalLiteral.MatchString(s) {
		return 0, false
	}
	switch strings.TrimLeft(s, "+") {
	case "Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// jsNumberString is JavaScript's Number.prototype.toString().
func jsNumberString(f float64) string { return jsjson.NumberString(f) }

// jsonStringify is JSON.stringify(v, null, 2) for decoded JSON, keys in
// JavaScript's order (see jsjson.Keys).
func jsonStringify(v any) string {
	return jsjson.Stringify(v, jsjson.Options{Indent: "  ", Keys: jsjson.Keys})
}

// normalizeArgs turns whatever the caller built into the values
// encoding/json decodes to, so that ints and float64s behave alike.
func normalizeArgs(args map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(args))
	for k, v := range args {
		n, err := normalizeJSON(v)
		if err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, nil
}

func normalizeJSON(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, float64, string:
		return x, nil
	case json.Number:
		return jsStringToNumberOrZero(string(x)), nil
	case map[string]any:
		return normalizeArgs(x)
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			n, err := normalizeJSON(item)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("arguments are not JSON: %w", err)
	}
	var decoded any
	if err := json.Unmarshal(data, &decoded); err != nil {
		return nil, fmt.Errorf("arguments are not JSON: %w", err)
	}
	return decoded, nil
}

func jsStringToNumberOrZero(s string) float64 {
	f, _ := jsStringToNumber(s)
	return f
}

// cloneJSON is structuredClone for decoded JSON.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			out[k] = cloneJSON(item)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = cloneJSON(item)
		}
		return out
	}
	return v
}

package jsjson

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Options say how Stringify lays out objects.
type Options struct {
	// Indent is JSON.stringify's third argument; empty means compact.
	Indent string
	// Keys orders an object's keys; nil means sorted.
	Keys func(map[string]any) []string
}

// Stringify encodes decoded JSON (nil, bool, float64, string, []any,
// map[string]any) as JSON.stringify does.
func Stringify(v any, o Options) string {
	if o.Keys == nil {
		o.Keys = SortedKeys
	}
	var b strings.Builder
	write(&b, v, "", o)
	return b.String()
}

// SortedKeys returns a map's keys in byte order.
func SortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

func write(b *strings.Builder, v any, indent string, o Options) {
	inner := indent + o.Indent
	open := func() {
		if o.Indent != "" {
			b.WriteString("\n" + inner)
		}
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			b.WriteString("null")
		} else {
			b.WriteString(NumberString(x))
		}
	case int:
		b.WriteString(NumberString(float64(x)))
	case string:
		writeString(b, x)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[")
		for i, item := range x {
			if i > 0 {
				b.WriteString(",")
			}
			open()
			write(b, item, inner, o)
		}
		if o.Indent != "" {
			b.WriteString("\n" + indent)
		}
		b.WriteString("]")
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{")
		for i, key := range o.Keys(x) {
			if i > 0 {
				b.WriteString(",")
			}
			open()
			writeString(b, key)
			b.WriteString(":")
			if o.Indent != "" {
				b.WriteString(" ")
			}
			write(b, x[key], inner, o)
		}
		if o.Indent != "" {
			b.WriteString("\n" + indent)
		}
		b.WriteString("}")
	default:
		write(b, plain(x), indent, o)
	}
}

// plain turns any other Go value (json.Number, sized ints, structs, typed
// maps) into the values JSON decoding gives, which is what JavaScript would
// hold; a value encoding/json cannot encode is null.
func plain(v any) any {
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanInt():
		return float64(rv.Int())
	case rv.CanUint():
		return float64(rv.Uint())
	case rv.CanFloat():
		return rv.Float()
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(data, &out) != nil {
		return nil
	}
	return out
}

func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// NumberString is JavaScript's Number.prototype.toString().
func NumberString(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case f == 0:
		return "0"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f < 0:
		return "-" + NumberString(-f)
	}
	mantissa, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	digits := strings.Replace(mantissa, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	k, n := len(digits), e+1
	switch {
	case k <= n && n <= 21:
		return digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return "0." + strings.Repeat("0", -n) + digits
	}
	sign := "+"
	if n-1 < 0 {
		sign = "-"
	}
	exponent := strconv.Itoa(max(n-1, 1-n))
	if k == 1 {
		return digits + "e" + sign + exponent
	}
	return digits[:1] + "." + digits[1:] + "e" + sign + exponent
}

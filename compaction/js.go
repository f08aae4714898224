package compaction

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// pi measures and cuts text as JavaScript does, in UTF-16 code units, and
// writes tool-call arguments with JSON.stringify. These helpers do the same on
// Go strings so that token estimates, truncation and prompts come out equal.

// jsLen is JavaScript's string length: UTF-16 code units.
func jsLen(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// jsSlice is s.slice(0, n) for n < jsLen(s). Where the cut falls inside a
// surrogate pair JavaScript keeps a lone high surrogate, which no UTF-8
// string can hold; it becomes U+FFFD, as it does when pi's request is
// decoded from JSON (JSON.stringify writes it as "\ud83d").
func jsSlice(s string, n int) string {
	units := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > n {
			if units < n {
				return s[:i] + string(utf8.RuneError)
			}
			return s[:i]
		}
		units += w
	}
	return s
}

// jsLess orders strings as JavaScript's default sort does: by UTF-16 code
// units, which differs from byte order for characters beyond U+FFFF.
func jsLess(a, b string) bool {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b))) < 0
}

// jsKeys returns an object's keys in the order JavaScript enumerates them:
// integer-like keys ascending, then the others. A Go map keeps no insertion
// order, so the others are in jsLess order, which is what pi sees for a
// transcript whose objects were written with sorted keys.
func jsKeys(m map[string]any) []string {
	var ints, strs []string
	for k := range m {
		if isArrayIndex(k) {
			ints = append(ints, k)
		} else {
			strs = append(strs, k)
		}
	}
	slices.SortFunc(ints, func(a, b string) int {
		x, _ := strconv.ParseUint(a, 10, 64)
		y, _ := strconv.ParseUint(b, 10, 64)
		return int(x) - int(y)
	})
	slices.SortFunc(strs, func(a, b string) int {
		if jsLess(a, b) {
			return -1
		}
		if jsLess(b, a) {
			return 1
		}
		return 0
	})
	return append(ints, strs...)
}

// isArrayIndex reports a canonical array index ("0", "17", not "017"),
// which JavaScript enumerates before other keys.
func isArrayIndex(k string) bool {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < '0' || k[i] > '9' {
			return false
		}
	}
	n, err := strconv.ParseUint(k, 10, 64)
	return err == nil && n < math.MaxUint32
}

// jsStringify is JSON.stringify for values decoded from JSON (maps, slices,
// strings, float64, bool, nil); other Go values go through encoding/json first.
func jsStringify(v any) string {
	var b strings.Builder
	writeJS(&b, v)
	return b.String()
}

func writeJS(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		writeJSString(b, v)
	case float64:
		b.WriteString(jsNumber(v))
	case json.Number:
		f, _ := v.Float64()
		b.WriteString(jsNumber(f))
	case map[string]any:
		b.WriteByte('{')
		for i, k := range jsKeys(v) {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSString(b, k)
			b.WriteByte(':')
			writeJS(b, v[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJS(b, e)
		}
		b.WriteByte(']')
	default:
		writeJS(b, viaJSON(v))
	}
}

// viaJSON turns any other Go value (ints, structs, typed maps) into the
// plain values JSON decoding gives.
func viaJSON(v any) any {
	if rv := reflect.ValueOf(v); rv.Kind() >= reflect.Int && rv.Kind() <= reflect.Float32 {
		f, _ := strconv.ParseFloat(fmt.Sprint(v), 64)
		return f
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

// jsNumber formats a number as JavaScript does (ES2015 Number::toString):
// plain digits from 1e-6 up to 1e21, exponent form beyond, and -0 as 0.
func jsNumber(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	if f == 0 {
		return "0"
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	// Go writes e-08 and e+21; JavaScript e-8 and e+21.
	mant, exp, _ := strings.Cut(s, "e")
	sign, digits := exp[:1], strings.TrimLeft(exp[1:], "0")
	return mant + "e" + sign + digits
}

// writeJSString quotes s as JSON.stringify does: only quote, backslash and
// control characters are escaped; <, >, &, U+2028 and U+2029 stay as they are.
func writeJSString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
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
				b.WriteString(`\u00`)
				b.WriteByte(hex[r>>4])
				b.WriteByte(hex[r&0xf])
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

package typebox

import (
	"math"
	"unicode/utf8"

	"github.com/durable-agents/agentloop/internal/jsjson"
)

// String and number keywords. None of them applies a schema, so unlike the
// object and array keywords they need not stop at the first failure.

func (c *checker) stringKeywords(ctx *errCtx, s *jsObject, path string, value string) bool {
	ok := true
	units, points := jsjson.LengthUTF16(value), utf8.RuneCountInString(value)
	// TypeBox counts code points, with a shortcut on the UTF-16 length whose
	// `limit << 1` truncates to int32 like any JavaScript shift.
	if limit, isNum := numberKeyword(s, "minLength"); isNum {
		if !(float64(units) >= float64(shiftLeft1(limit)) || (float64(units) >= limit && float64(points) >= limit)) {
			ok = ctx.add("minLength", path, "must not have fewer than "+jsNumberString(limit)+" characters")
		}
	}
	if limit, isNum := numberKeyword(s, "maxLength"); isNum {
		if !(float64(units) <= limit || (float64(units) <= float64(shiftLeft1(limit)) && float64(points) <= limit)) {
			ok = ctx.add("maxLength", path, "must not have more than "+jsNumberString(limit)+" characters")
		}
	}
	if format, isFormat := stringKeyword(s, "format"); isFormat {
		if check := formatCheckers[format]; check != nil && !check(value) {
			ok = ctx.add("format", path, `must match format "`+format+`"`)
		}
	}
	if pattern, isPattern := stringKeyword(s, "pattern"); isPattern {
		if re := c.cs.pattern(pattern); re != nil && !c.test(re, value) {
			ok = ctx.add("pattern", path, `must match pattern "`+pattern+`"`)
		}
	}
	return ok
}

func numberKeywords(ctx *errCtx, s *jsObject, path string, value float64) bool {
	ok := true
	if limit, isNum := numberKeyword(s, "exclusiveMinimum"); isNum && !(value > limit) {
		ok = ctx.add("exclusiveMinimum", path, "must be > "+jsNumberString(limit))
	}
	if limit, isNum := numberKeyword(s, "exclusiveMaximum"); isNum && !(value < limit) {
		ok = ctx.add("exclusiveMaximum", path, "must be < "+jsNumberString(limit))
	}
	if limit, isNum := numberKeyword(s, "minimum"); isNum && !(value >= limit) {
		ok = ctx.add("minimum", path, "must be >= "+jsNumberString(limit))
	}
	if limit, isNum := numberKeyword(s, "maximum"); isNum && !(value <= limit) {
		ok = ctx.add("maximum", path, "must be <= "+jsNumberString(limit))
	}
	if divisor, isNum := numberKeyword(s, "multipleOf"); isNum && !isMultipleOf(value, divisor) {
		ok = ctx.add("multipleOf", path, "must be multiple of "+jsNumberString(divisor))
	}
	return ok
}

// isMultipleOf is TypeBox's Guard.IsMultipleOf, tolerance included.
func isMultipleOf(dividend, divisor float64) bool {
	if isJSInteger(dividend) && math.Mod(1/divisor, 1) == 0 {
		return true
	}
	mod := math.Mod(dividend, divisor)
	least := math.Min(math.Abs(mod), math.Min(math.Abs(mod-divisor), math.Abs(mod+divisor)))
	return least < 1e-10
}

func isJSInteger(f float64) bool {
	return !math.IsInf(f, 0) && !math.IsNaN(f) && f == math.Trunc(f)
}

// shiftLeft1 is JavaScript's `x << 1`.
func shiftLeft1(f float64) int32 {
	return int32(uint32(toInt32(f)) << 1)
}

func toInt32(f float64) int32 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	m := math.Mod(math.Trunc(f), 1<<32)
	if m < 0 {
		m += 1 << 32
	}
	return int32(uint32(m))
}

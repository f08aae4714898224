package jsjson

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"unicode/utf16"
)

// Keys returns an object's keys in the order JavaScript enumerates them:
// array indexes ascending, then the others. A Go map keeps no insertion
// order, so the others are sorted by UTF-16 code units (CompareUTF16), which
// is what pi sees for an object written with sorted keys.
func Keys(m map[string]any) []string {
	return slices.SortedFunc(maps.Keys(m), func(x, y string) int {
		a, aIndex := ArrayIndex(x)
		b, bIndex := ArrayIndex(y)
		switch {
		case aIndex && bIndex:
			return cmp.Compare(a, b)
		case aIndex:
			return -1
		case bIndex:
			return 1
		}
		return CompareUTF16(x, y)
	})
}

// ArrayIndex reports whether key is a JavaScript array index (a canonical
// decimal below 2^32-1: "17", not "017") and its value.
func ArrayIndex(key string) (uint64, bool) {
	if key == "" || len(key) > 10 || (len(key) > 1 && key[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(key, 10, 64)
	if err != nil || n >= 1<<32-1 {
		return 0, false
	}
	return n, true
}

// CompareUTF16 orders strings by UTF-16 code units, as JavaScript's
// comparisons and default sort do; it differs from Go's byte order for
// characters beyond U+FFFF.
func CompareUTF16(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// LengthUTF16 is JavaScript's string length: UTF-16 code units.
func LengthUTF16(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

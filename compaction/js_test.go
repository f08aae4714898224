package compaction

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/internal/jsjson"
)

// Cases the golden transcripts cannot hold: values JSON.parse never makes
// (-0 is written as 0) and Go values a caller may put in arguments.
func TestJSStringify(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{math.Copysign(0, -1), "0"},
		{1e21, "1e+21"},
		{1e-7, "1e-7"},
		{0.000001, "0.000001"},
		{123456789012345680000.0, "123456789012345680000"},
		{-1.5e-10, "-1.5e-10"},
		{42, "42"},
		{uint8(7), "7"},
		{json.Number("2.50"), "2.5"},
		{"<a&b>\u2028\x7f\x01\"\\", `"<a&b>` + "\u2028\x7f" + `\u0001\"\\"`},
		{map[string]any{"b": 1.0, "10": true, "2": nil, "a": []any{}, "01": "x"}, `{"2":null,"10":true,"01":"x","a":[],"b":1}`},
		{map[string]int{"z": 1}, `{"z":1}`},
		{struct{ X string }{"y"}, `{"X":"y"}`},
	} {
		require.Equal(t, c.want, jsStringify(c.v), "%#v", c.v)
	}
	require.Equal(t, "{}", argumentsJSON(nil))
}

func TestJSStrings(t *testing.T) {
	require.Equal(t, 4, jsLen("a😀b"))
	require.Equal(t, "a\uFFFD", jsSlice("a😀b", 2))
	require.Equal(t, "a😀", jsSlice("a😀b", 3))
	require.Negative(t, jsjson.CompareUTF16("😀.txt", "ｆ.txt")) // UTF-16: D83D < FF46; bytes say otherwise
	require.False(t, "😀.txt" < "ｆ.txt")
}

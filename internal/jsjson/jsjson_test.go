package jsjson

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStringifyMatchesJavaScript(t *testing.T) {
	tenth, fifth := 0.1, 0.2 // variables: constants would fold to exactly 0.3
	v := map[string]any{
		"b": []any{1.0, 0.0, math.Copysign(0, -1), 1e21, 1e-7, tenth + fifth, 123456789012345680000.0},
		"a": "<tag> & \u2028 \"q\" \\ \n \x01 é",
		"c": map[string]any{}, "d": []any{}, "e": nil, "f": true,
	}
	// Expected text from node: JSON.stringify(v) with sorted keys.
	want := `{"a":"<tag> & ` + "\u2028" + ` \"q\" \\ \n \u0001 é","b":[1,0,0,1e+21,1e-7,0.30000000000000004,123456789012345680000],"c":{},"d":[],"e":null,"f":true}`
	require.Equal(t, want, Stringify(v, Options{}))
	require.Equal(t, "{\n  \"a\": [\n    1\n  ]\n}", Stringify(map[string]any{"a": []any{1.0}}, Options{Indent: "  "}))
}

package typebox

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// The golden results come from pi itself: testdata/validation/gen.mjs runs
// pi-ai's validateToolArguments on every case in cases.json. Regenerate with
//
//	node internal/typebox/testdata/validation/gen.mjs

type validationCase struct {
	Name   string          `json:"name"`
	Tool   string          `json:"tool"`
	Schema json.RawMessage `json:"schema"`
	Args   map[string]any  `json:"args"`
}

type validationGolden struct {
	Name       string         `json:"name"`
	OK         bool           `json:"ok"`
	Result     map[string]any `json:"result"`
	ResultJSON string         `json:"resultJSON"`
	Error      string         `json:"error"`
	ErrorType  string         `json:"errorType"`
}

func loadValidationCases(t testing.TB) ([]validationCase, []validationGolden) {
	t.Helper()
	var cases []validationCase
	var golden []validationGolden
	for path, into := range map[string]any{
		"testdata/validation/cases.json":  &cases,
		"testdata/validation/golden.json": &golden,
	} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, into); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if len(cases) != len(golden) {
		t.Fatalf("%d cases but %d golden results: run gen.mjs", len(cases), len(golden))
	}
	return cases, golden
}

func TestValidateMatchesPi(t *testing.T) {
	cases, golden := loadValidationCases(t)
	for i, c := range cases {
		want := golden[i]
		if want.Name != c.Name {
			t.Fatalf("golden[%d] is %q, case is %q: run gen.mjs", i, want.Name, c.Name)
		}
		t.Run(c.Name, func(t *testing.T) {
			tool := c.Tool
			if tool == "" {
				tool = "demo"
			}
			before := jsonStringify(c.Args)
			got, err := Validate(tool, c.Schema, c.Args)
			if after := jsonStringify(c.Args); after != before {
				t.Errorf("arguments were mutated:\n%s\nbecame\n%s", before, after)
			}
			if !want.OK {
				wantErr := want.Error
				if err == nil {
					t.Fatalf("got success %s, want error:\n%s", jsonStringify(got), wantErr)
				}
				if err.Error() != wantErr {
					t.Fatalf("error differs from pi (%s)\ngot:\n%s\nwant:\n%s", want.ErrorType, err, wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error, pi returned %s:\n%v", want.ResultJSON, err)
			}
			if !reflect.DeepEqual(got, want.Result) || jsonStringify(got) != want.ResultJSON {
				t.Fatalf("result differs from pi\ngot:\n%s\nwant:\n%s", jsonStringify(got), want.ResultJSON)
			}
		})
	}
}

func TestValidateEmptySchema(t *testing.T) {
	args := map[string]any{"x": 1}
	for _, schema := range []string{"", "  ", "null", `{"type":"object","properties":{}}`} {
		got, err := Validate("t", json.RawMessage(schema), args)
		if err != nil || !reflect.DeepEqual(got, map[string]any{"x": 1.0}) {
			t.Errorf("schema %q: got %v, %v", schema, got, err)
		}
	}
	if got, err := Validate("t", nil, nil); err != nil || len(got) != 0 {
		t.Errorf("nil schema, nil args: got %v, %v", got, err)
	}
}

func TestValidateInvalidSchema(t *testing.T) {
	for _, schema := range []string{`{`, `[]`, `5`, `"x"`, `true`, `{"a":1} x`, `{"properties":{"a":{"pattern":"(?i)a"}}}`, `{"pattern":"(unclosed"}`} {
		_, err := Validate("t", json.RawMessage(schema), map[string]any{})
		if err == nil || !strings.HasPrefix(err.Error(), `tool "t": invalid parameters schema: `) {
			t.Errorf("schema %s: got error %v", schema, err)
		}
	}
}

// Go callers build arguments by hand too; ints must behave like decoded
// float64s.
func TestValidateGoNumbers(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":"string"}}}`)
	got, err := Validate("t", schema, map[string]any{"n": int64(3), "s": 7, "list": []any{uint8(1)}})
	want := map[string]any{"n": 3.0, "s": "7", "list": []any{1.0}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestValidateConcurrent(t *testing.T) {
	cases, golden := loadValidationCases(t)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, c := range cases {
				_, err := Validate("demo", c.Schema, c.Args)
				if (err == nil) != golden[i].OK && c.Tool == "" {
					t.Errorf("%s: ok=%v, pi ok=%v", c.Name, err == nil, golden[i].OK)
				}
			}
		}()
	}
	wg.Wait()
}

func TestJSNumberString(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0", 1: "1", -1.5: "-1.5", 1e21: "1e+21", 1e20: "100000000000000000000", 0.30000000000000004: "0.30000000000000004",
		1e-7: "1e-7", 1e-6: "0.000001", 123e-20: "1.23e-18", 5e-324: "5e-324", 1.7976931348623157e308: "1.7976931348623157e+308",
	} {
		if got := jsNumberString(f); got != want {
			t.Errorf("jsNumberString(%v) = %q, want %q", f, got, want)
		}
	}
}

func FuzzValidate(f *testing.F) {
	cases, _ := loadValidationCases(f)
	for _, c := range cases {
		args, _ := json.Marshal(c.Args)
		f.Add([]byte(c.Schema), args)
	}
	f.Fuzz(func(t *testing.T, schema, rawArgs []byte) {
		var args map[string]any
		if json.Unmarshal(rawArgs, &args) != nil {
			return
		}
		before := jsonStringify(args)
		got1, err1 := Validate("fuzz", schema, args)
		got2, err2 := Validate("fuzz", schema, args)
		if jsonStringify(args) != before {
			t.Fatalf("arguments were mutated")
		}
		if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
			t.Fatalf("nondeterministic errors: %v / %v", err1, err2)
		}
		if jsonStringify(got1) != jsonStringify(got2) {
			t.Fatalf("nondeterministic results: %s / %s", jsonStringify(got1), jsonStringify(got2))
		}
	})
}

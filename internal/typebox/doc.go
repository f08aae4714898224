// Package typebox validates tool-call arguments against a tool's JSON schema
// exactly as pi-ai's validateToolArguments does (@mariozechner/pi-ai 0.73.1,
// TypeBox 1.x): the same coercion, the same accepted values, and the same
// error texts, byte for byte, because those texts go back to the model.
//
// Validate is the whole API. The files port the parts of TypeBox 1.x's schema
// engine (typebox/build/schema/engine) that pi reaches for a plain JSON
// schema: the keyword guards (guards.go), the order keywords are checked in
// and which errors are reported (engine.go, object.go, array.go, scalar.go,
// applicators.go, ref.go), their en_US texts, and the formats (formats.go,
// hostname.go). Keywords TypeBox knows but tool schemas do not use ($id
// resources, $anchor, $dynamicRef, $recursiveRef, unevaluatedItems,
// unevaluatedProperties) are ignored. schema.go compiles and caches a schema,
// coerce.go is pi's own coercion, and jsvalue.go, args.go and parse.go give Go
// values JavaScript's semantics (key order, UTF-16 lengths, Number()).
//
// The golden tests compare every case of testdata/validation/cases.json with
// what pi itself returned for it (golden.json, written by gen.mjs).
package typebox

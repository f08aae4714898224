package typebox

import (
	"math"
	"strings"

	"github.com/dlclark/regexp2/v2"
)

// This file is the evaluator: error contexts, the walk over a schema and the
// type keyword. The other keywords are in object.go, array.go, scalar.go and
// applicators.go.

// maxErrors is TypeBox's default Settings.maxErrors. Each error context
// (allOf, anyOf, oneOf, if and $ref open their own) stops collecting at it.
const maxErrors = 8

// maxDepth bounds nested schema evaluation. A $ref cycle that never descends
// into the value overflows the JavaScript stack in pi; here it ends the same
// way, with V8's RangeError text.
const maxDepth = 4096

var errStackOverflow = jsThrow("Maximum call stack size exceeded")

// jsThrow is an error pi throws as a JavaScript exception instead of
// reporting a validation failure; its text is V8's.
type jsThrow string

func (e jsThrow) Error() string { return string(e) }

// schemaError is one TypeBox error, already rendered in en_US.
type schemaError struct {
	keyword      string
	instancePath string
	message      string
	// missing is the first missing property of a required error: pi puts it
	// in the path.
	missing string
}

// evalMode is which of TypeBox's three evaluators a walk imitates. They
// accept the same values but stop at different points, which decides
// whether a $ref cycle behind a failing keyword is ever entered.
type evalMode int

const (
	// compiledCheck is Validator.Check, the generated code: every
	// conjunction short-circuits, anyOf stops at the first passing member,
	// contains at the first matching item.
	compiledCheck evalMode = iota
	// interpretedCheck is CheckSchema, which Errors uses for not and
	// contains: conjunctions short-circuit but anyOf, allOf and contains
	// look at every member or item.
	interpretedCheck
	// collectErrors is ErrorSchema: everything is evaluated so that every
	// error is reported.
	collectErrors
)

// errCtx is TypeBox's ErrorContext, or its CheckContext when not collecting.
type errCtx struct {
	mode evalMode
	errs []schemaError
}

func (c *errCtx) collect() bool { return c.mode == collectErrors }

// short reports whether evaluation stops at the first failure.
func (c *errCtx) short() bool { return c.mode != collectErrors }

func (c *errCtx) full() bool { return c.collect() && len(c.errs) >= maxErrors }

func (c *errCtx) child() *errCtx { return &errCtx{mode: c.mode} }

// check is the context for a nested yes/no question (not, contains):
// Errors asks it with the interpreted checker.
func (c *errCtx) check() *errCtx {
	if c.mode == compiledCheck {
		return &errCtx{mode: compiledCheck}
	}
	return &errCtx{mode: interpretedCheck}
}

// add records an error and returns false, so callers can write
// `return ok || ctx.add(...)` as TypeBox does.
func (c *errCtx) add(keyword, path, message string) bool {
	return c.addError(schemaError{keyword: keyword, instancePath: path, message: message})
}

func (c *errCtx) addError(e schemaError) bool {
	if c.collect() && !c.full() {
		c.errs = append(c.errs, e)
	}
	return false
}

func (c *errCtx) addAll(errs []schemaError) {
	for _, e := range errs {
		c.addError(e)
	}
}

// checker evaluates one compiled validator: root is what local $refs resolve
// against, which for pi's union coercion is the member schema alone.
type checker struct {
	cs    *compiledSchema
	root  any
	depth int
	// failed is why the evaluation stopped before its end: V8's stack
	// overflow, or a pattern that could not finish its match.
	failed error
}

// run is pi's use of a validator: Check, and only if that fails, Errors.
func (c *checker) run(value any, collect bool) (bool, []schemaError, error) {
	ok := c.validate(&errCtx{mode: compiledCheck}, c.root, "", value)
	if c.failed != nil {
		return false, nil, c.failed
	}
	if ok || !collect {
		return ok, nil, nil
	}
	ctx := &errCtx{mode: collectErrors}
	c.validate(ctx, c.root, "", value)
	if c.failed != nil {
		return false, nil, c.failed
	}
	return false, ctx.errs, nil
}

// test is RegExp.prototype.test. A match that cannot finish stops the
// whole evaluation, which then fails with its error.
func (c *checker) test(re *regexp2.Regexp, s string) bool {
	ok, err := matchPattern(re, s)
	if err != nil && c.failed == nil {
		c.failed = err
	}
	return ok
}

// validate is ErrorSchema, CheckSchema or the compiled check, depending on
// ctx. Keywords are taken in TypeBox's order.
func (c *checker) validate(ctx *errCtx, schema any, path string, value any) bool {
	if ctx.full() || c.failed != nil {
		return false
	}
	if c.depth >= maxDepth {
		c.failed = errStackOverflow
		return false
	}
	c.depth++
	defer func() { c.depth-- }()

	s, isObject := schema.(*jsObject)
	if !isObject {
		if b, isBool := schema.(bool); isBool && !b {
			return ctx.add("boolean", path, "schema is false")
		}
		// true, or an array: TypeBox compiles an array to a check that
		// always passes.
		return true
	}
	ok := c.typeKeyword(ctx, s, path, value)
	if !ok && ctx.short() {
		return false
	}
	switch v := value.(type) {
	case map[string]any:
		ok = c.objectKeywords(ctx, s, path, v) && ok
	case []any:
		ok = c.arrayKeywords(ctx, s, path, v) && ok
	case string:
		ok = c.stringKeywords(ctx, s, path, v) && ok
	case float64:
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			ok = numberKeywords(ctx, s, path, v) && ok
		}
	}
	if !ok && ctx.short() {
		return false
	}
	return c.applicators(ctx, s, path, value) && ok
}

func (c *checker) typeKeyword(ctx *errCtx, s *jsObject, path string, value any) bool {
	raw, present := s.get("type")
	if !present {
		return true
	}
	if name, ok := raw.(string); ok {
		return typeMatches(name, value) || ctx.add("type", path, "must be "+name)
	}
	names, ok := stringList(raw)
	if !ok {
		return true
	}
	for _, name := range names {
		if typeMatches(name, value) {
			return true
		}
	}
	return ctx.add("type", path, "must be either "+strings.Join(names, " or "))
}

func typeMatches(name string, value any) bool {
	switch name {
	case "object":
		_, ok := value.(map[string]any)
		return ok
	case "array":
		_, ok := value.([]any)
		return ok
	case "boolean":
		_, ok := value.(bool)
		return ok
	case "integer":
		f, ok := value.(float64)
		return ok && isJSInteger(f)
	case "number":
		f, ok := value.(float64)
		return ok && !math.IsInf(f, 0) && !math.IsNaN(f)
	case "null":
		return value == nil
	case "string":
		_, ok := value.(string)
		return ok
	case "bigint", "constructor", "function", "symbol", "undefined", "void":
		return false
	default:
		// TypeBox lets unknown type names pass.
		return true
	}
}

// keywordRun strings keyword checks together in TypeBox's order:
//
//	run := newKeywordRun(ctx)
//	_ = run.next(c.checkA(...)) && run.next(c.checkB(...))
//	return run.ok
//
// A check stops at the first failing keyword, as TypeBox's do (what comes
// after it, a $ref cycle say, is never entered); collecting errors runs them
// all. The checks are direct calls: through function values ctx would escape
// and every nested context would be allocated on the heap. The keywords that
// check each property or item (properties, items, ...) run their parts the
// same way.
type keywordRun struct {
	short bool
	ok    bool
}

func newKeywordRun(ctx *errCtx) keywordRun {
	return keywordRun{short: ctx.short(), ok: true}
}

// next records whether a keyword passed and reports whether to go on.
func (r *keywordRun) next(passed bool) bool {
	if !passed {
		r.ok = false
		return !r.short
	}
	return true
}

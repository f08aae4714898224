package typebox

// applicators checks the keywords that apply other schemas or compare the
// value as a whole, in TypeBox's order.
func (c *checker) applicators(ctx *errCtx, s *jsObject, path string, value any) bool {
	run := newKeywordRun(ctx)
	_ = run.next(c.checkRef(ctx, s, path, value)) &&
		run.next(c.checkConst(ctx, s, path, value)) &&
		run.next(c.checkEnum(ctx, s, path, value)) &&
		run.next(c.checkIf(ctx, s, path, value)) &&
		run.next(c.checkNot(ctx, s, path, value)) &&
		run.next(c.checkAllOf(ctx, s, path, value)) &&
		run.next(c.checkAnyOf(ctx, s, path, value)) &&
		run.next(c.checkOneOf(ctx, s, path, value))
	return run.ok
}

func (c *checker) checkRef(ctx *errCtx, s *jsObject, path string, value any) bool {
	ref, isRef := stringKeyword(s, "$ref")
	if !isRef {
		return true
	}
	target := c.resolveRef(ref)
	next := ctx.child()
	// The generated code accepts a $ref to an array, the interpreter
	// (and so Errors) rejects it without an error, which is how pi can
	// end up with "Unknown validation error".
	if _, isArray := target.([]any); isArray && ctx.mode != compiledCheck {
		target = false
		next = &errCtx{mode: interpretedCheck}
	}
	if !c.validate(next, target, path, value) {
		ctx.addAll(next.errs)
		return false
	}
	return true
}

func (c *checker) checkConst(ctx *errCtx, s *jsObject, path string, value any) bool {
	constant, isConst := s.get("const")
	return !isConst || jsDeepEqual(value, constant) || ctx.add("const", path, "must be equal to constant")
}

func (c *checker) checkEnum(ctx *errCtx, s *jsObject, path string, value any) bool {
	options, isEnum := s.vals["enum"].([]any)
	if !isEnum {
		return true
	}
	for _, option := range options {
		if jsDeepEqual(value, option) {
			return true
		}
	}
	return ctx.add("enum", path, "must be equal to one of the allowed values")
}

// checkIf keeps TypeBox's asymmetry: errors of a failing "then" are
// dropped, errors of a failing "else" are kept.
func (c *checker) checkIf(ctx *errCtx, s *jsObject, path string, value any) bool {
	cond, isIf := schemaKeyword(s, "if")
	if !isIf {
		return true
	}
	thenSchema, hasThen := schemaKeyword(s, "then")
	if !hasThen {
		thenSchema = true
	}
	elseSchema, hasElse := schemaKeyword(s, "else")
	if !hasElse {
		elseSchema = true
	}
	trueCtx := ctx.child()
	if c.validate(trueCtx, cond, path, value) {
		return c.validate(trueCtx, thenSchema, path, value) || ctx.add("if", path, `must match "then" schema`)
	}
	return c.validate(ctx, elseSchema, path, value) || ctx.add("if", path, `must match "else" schema`)
}

func (c *checker) checkNot(ctx *errCtx, s *jsObject, path string, value any) bool {
	not, isNot := schemaKeyword(s, "not")
	if !isNot || !c.validate(ctx.check(), not, path, value) {
		return true
	}
	return ctx.add("not", path, "must not be valid")
}

func (c *checker) checkAllOf(ctx *errCtx, s *jsObject, path string, value any) bool {
	list, isAllOf := schemaListKeyword(s, "allOf")
	if !isAllOf {
		return true
	}
	if passed, failed := c.members(ctx, list, path, value, "allOf"); passed != len(list) {
		ctx.addAll(failed)
		return false
	}
	return true
}

func (c *checker) checkAnyOf(ctx *errCtx, s *jsObject, path string, value any) bool {
	list, isAnyOf := schemaListKeyword(s, "anyOf")
	if !isAnyOf {
		return true
	}
	if passed, failed := c.members(ctx, list, path, value, "anyOf"); passed == 0 {
		ctx.addAll(failed)
		return ctx.add("anyOf", path, "must match a schema in anyOf")
	}
	return true
}

func (c *checker) checkOneOf(ctx *errCtx, s *jsObject, path string, value any) bool {
	list, isOneOf := schemaListKeyword(s, "oneOf")
	if !isOneOf {
		return true
	}
	passed, failed := c.members(ctx, list, path, value, "oneOf")
	if passed == 1 {
		return true
	}
	if passed == 0 {
		ctx.addAll(failed)
	}
	return ctx.add("oneOf", path, "must match exactly one schema in oneOf")
}

// members evaluates each schema in its own context and returns how many
// passed and the errors of those that failed, in order. The compiled check
// stops anyOf at the first pass and allOf at the first failure; everything
// else looks at every member.
func (c *checker) members(ctx *errCtx, list []any, path string, value any, keyword string) (int, []schemaError) {
	passed := 0
	var failed []schemaError
	for _, member := range list {
		next := ctx.child()
		if c.validate(next, member, path, value) {
			passed++
			if keyword == "anyOf" && ctx.mode == compiledCheck {
				break
			}
		} else {
			failed = append(failed, next.errs...)
			if keyword == "allOf" && ctx.mode == compiledCheck {
				break
			}
		}
	}
	return passed, failed
}

// ifKeyword keeps TypeBox's asymmetry: errors of a failing "then" are

package typebox

import "strconv"

// arrayKeywords checks the array keywords in TypeBox's order.
func (c *checker) arrayKeywords(ctx *errCtx, s *jsObject, path string, value []any) bool {
	run := newKeywordRun(ctx)
	_ = run.next(c.checkAdditionalItems(ctx, s, path, value)) &&
		run.next(c.checkContains(ctx, s, path, value)) &&
		run.next(c.checkItems(ctx, s, path, value)) &&
		run.next(c.checkMinContains(ctx, s, path, value)) &&
		run.next(c.checkMaxContains(ctx, s, path, value)) &&
		run.next(c.checkMinItems(ctx, s, path, value)) &&
		run.next(c.checkMaxItems(ctx, s, path, value)) &&
		run.next(c.checkPrefixItems(ctx, s, path, value)) &&
		run.next(c.checkUniqueItems(ctx, s, path, value))
	return run.ok
}

func (c *checker) checkAdditionalItems(ctx *errCtx, s *jsObject, path string, value []any) bool {
	additional, isAI := schemaKeyword(s, "additionalItems")
	tuple, isTuple := tupleKeyword(s)
	if !isAI || !isTuple {
		return true
	}
	// TypeBox stops at the first failing additional item, even in Errors.
	for i := len(tuple); i < len(value); i++ {
		if !c.validate(ctx, additional, path+"/"+strconv.Itoa(i), value[i]) {
			return false
		}
	}
	return true
}

// checkContains is contains on its own or with a non-zero minContains;
// checkMinContains and checkMaxContains count the matches again.
func (c *checker) checkContains(ctx *errCtx, s *jsObject, path string, value []any) bool {
	contains, hasContains := schemaKeyword(s, "contains")
	minContains, hasMinContains := numberKeyword(s, "minContains")
	if !hasContains || (hasMinContains && minContains == 0) {
		return true
	}
	if len(value) == 0 || c.countMatching(ctx, contains, value, ctx.mode == compiledCheck) == 0 {
		return ctx.add("contains", path, "must contain at least 1 valid item")
	}
	return true
}

// checkItems is items as a tuple, or as the schema of every item after
// prefixItems.
func (c *checker) checkItems(ctx *errCtx, s *jsObject, path string, value []any) bool {
	if tuple, isTuple := tupleKeyword(s); isTuple {
		return c.positionalItems(ctx, tuple, path, value)
	}
	items, isItems := schemaKeyword(s, "items")
	if !isItems {
		return true
	}
	offset := 0
	if prefix, isPrefix := schemaListKeyword(s, "prefixItems"); isPrefix {
		offset = len(prefix)
	}
	run := newKeywordRun(ctx)
	for i := offset; i < len(value); i++ {
		if !run.next(c.validate(ctx, items, path+"/"+strconv.Itoa(i), value[i])) {
			return false
		}
	}
	return run.ok
}

func (c *checker) checkMinContains(ctx *errCtx, s *jsObject, path string, value []any) bool {
	contains, hasContains := schemaKeyword(s, "contains")
	minContains, hasMinContains := numberKeyword(s, "minContains")
	if hasContains && hasMinContains && !(float64(c.countMatching(ctx, contains, value, false)) >= minContains) {
		return ctx.add("contains", path, "must contain at least 1 valid item")
	}
	return true
}

func (c *checker) checkMaxContains(ctx *errCtx, s *jsObject, path string, value []any) bool {
	contains, hasContains := schemaKeyword(s, "contains")
	if limit, isNum := numberKeyword(s, "maxContains"); isNum && hasContains && !(float64(c.countMatching(ctx, contains, value, false)) <= limit) {
		return ctx.add("contains", path, "must contain at least 1 valid item")
	}
	return true
}

func (c *checker) checkMinItems(ctx *errCtx, s *jsObject, path string, value []any) bool {
	limit, isNum := numberKeyword(s, "minItems")
	return !isNum || float64(len(value)) >= limit ||
		ctx.add("minItems", path, "must not have fewer than "+jsNumberString(limit)+" items")
}

func (c *checker) checkMaxItems(ctx *errCtx, s *jsObject, path string, value []any) bool {
	limit, isNum := numberKeyword(s, "maxItems")
	return !isNum || float64(len(value)) <= limit ||
		ctx.add("maxItems", path, "must not have more than "+jsNumberString(limit)+" items")
}

func (c *checker) checkPrefixItems(ctx *errCtx, s *jsObject, path string, value []any) bool {
	prefix, isPrefix := schemaListKeyword(s, "prefixItems")
	if !isPrefix || len(value) == 0 {
		return true
	}
	return c.positionalItems(ctx, prefix, path, value)
}

func (c *checker) checkUniqueItems(ctx *errCtx, s *jsObject, path string, value []any) bool {
	unique, _ := s.get("uniqueItems")
	return unique != true || !hasDuplicates(value) ||
		ctx.add("uniqueItems", path, "must not have duplicate items")
}

// positionalItems checks each item against the schema at its position.
func (c *checker) positionalItems(ctx *errCtx, schemas []any, path string, value []any) bool {
	run := newKeywordRun(ctx)
	for i, item := range schemas {
		if i < len(value) && !run.next(c.validate(ctx, item, path+"/"+strconv.Itoa(i), value[i])) {
			return false
		}
	}
	return run.ok
}

// countMatching counts the items that match schema; with firstOnly it stops
// at the first, as the compiled `contains` does.
func (c *checker) countMatching(ctx *errCtx, schema any, value []any, firstOnly bool) int {
	n := 0
	for _, item := range value {
		if c.validate(ctx.check(), schema, "", item) {
			n++
			if firstOnly {
				break
			}
		}
	}
	return n
}

package typebox

import "math"

// Keyword guards, mirroring typebox/build/schema/types: a keyword whose value
// has the wrong shape is not a keyword at all.

func isSchema(v any) bool {
	switch v.(type) {
	case bool, *jsObject:
		return true
	}
	return false
}

func schemaKeyword(o *jsObject, key string) (any, bool) {
	v, ok := o.get(key)
	return v, ok && isSchema(v)
}

func numberKeyword(o *jsObject, key string) (float64, bool) {
	v, _ := o.get(key)
	f, ok := v.(float64)
	return f, ok && !math.IsInf(f, 0) && !math.IsNaN(f)
}

func stringKeyword(o *jsObject, key string) (string, bool) {
	v, _ := o.get(key)
	s, ok := v.(string)
	return s, ok
}

func schemaListKeyword(o *jsObject, key string) ([]any, bool) {
	v, _ := o.get(key)
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	for _, s := range list {
		if !isSchema(s) {
			return nil, false
		}
	}
	return list, true
}

func schemaMapKeyword(o *jsObject, key string) (*jsObject, bool) {
	v, _ := o.get(key)
	m, ok := v.(*jsObject)
	if !ok {
		return nil, false
	}
	for _, k := range m.keys {
		if !isSchema(m.vals[k]) {
			return nil, false
		}
	}
	return m, true
}

func stringListKeyword(o *jsObject, key string) ([]string, bool) {
	v, _ := o.get(key)
	return stringList(v)
}

func stringList(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		str, ok := s.(string)
		if !ok {
			return nil, false
		}
		out = append(out, str)
	}
	return out, true
}

func isArray(v any) bool {
	_, ok := v.([]any)
	return ok
}

func dependenciesKeyword(s *jsObject) (*jsObject, bool) {
	v, _ := s.get("dependencies")
	deps, ok := v.(*jsObject)
	if !ok {
		return nil, false
	}
	for _, key := range deps.keys {
		if _, isList := stringList(deps.vals[key]); !isList && !isSchema(deps.vals[key]) {
			return nil, false
		}
	}
	return deps, true
}

func dependentRequiredKeyword(s *jsObject) (*jsObject, bool) {
	v, _ := s.get("dependentRequired")
	deps, ok := v.(*jsObject)
	if !ok {
		return nil, false
	}
	for _, key := range deps.keys {
		if _, isList := stringList(deps.vals[key]); !isList {
			return nil, false
		}
	}
	return deps, true
}

// tupleKeyword is items in its array form, where every member is a schema.
func tupleKeyword(s *jsObject) ([]any, bool) {
	itemsRaw, _ := s.get("items")
	tuple, isTuple := itemsRaw.([]any)
	for _, item := range tuple {
		isTuple = isTuple && isSchema(item)
	}
	return tuple, isTuple
}

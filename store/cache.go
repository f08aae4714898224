package store

import (
	"container/list"
	"strings"
	"sync"
	"time"
)

// lru keeps the most recently used values up to a total size. Safe for
// concurrent use.
type lru[V any] struct {
	mu    sync.Mutex
	limit int
	size  int
	order *list.List // of *entry[V], most recent first
	byKey map[string]*list.Element
}

type entry[V any] struct {
	key   string
	value V
	size  int
}

func newLRU[V any](limit int) *lru[V] {
	return &lru[V]{limit: limit, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *lru[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry[V]).value, true
}

// add stores value, evicting the least recently used entries to make room;
// a value larger than the whole limit is not kept.
func (c *lru[V]) add(key string, value V, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.removeElement(el)
	}
	if size > c.limit {
		return
	}
	c.byKey[key] = c.order.PushFront(&entry[V]{key: key, value: value, size: size})
	c.size += size
	for c.size > c.limit {
		c.removeElement(c.order.Back())
	}
}

// removePrefix drops every key that starts with prefix.
func (c *lru[V]) removePrefix(prefix string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, el := range c.byKey {
		if strings.HasPrefix(key, prefix) {
			c.removeElement(el)
		}
	}
}

func (c *lru[V]) removeElement(el *list.Element) {
	e := c.order.Remove(el).(*entry[V])
	delete(c.byKey, e.key)
	c.size -= e.size
}

// seenFor bounds how long Put trusts that a key it wrote or read is still
// stored. Sweep deletes only scopes with nothing written for longer than
// its cutoff (days in practice), so a key seen within the hour cannot have
// been swept unless the cutoff is shorter than this.
const seenFor = time.Hour

// seenKeys is the bounded set of keys this process wrote or read.
type seenKeys struct{ lru *lru[time.Time] }

const seenLimit = 1 << 16

func newSeenKeys() seenKeys { return seenKeys{newLRU[time.Time](seenLimit)} }

func (s seenKeys) has(key string) bool {
	at, ok := s.lru.get(key)
	return ok && time.Since(at) < seenFor
}

func (s seenKeys) add(key string) { s.lru.add(key, time.Now(), 1) }

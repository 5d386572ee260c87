package speech

import (
	"context"
	"sync"
)

// ResourceNames reads every resource's display name; the store implements
// it.
type ResourceNames interface {
	AllDisplayNames(ctx context.Context) (map[string]string, error)
}

// Names keeps resources' display names for the spoken lines, for the REST
// answers and the voice tools alike. It is a cache the wiring keeps filled
// (Refresh at start, then every so often), and that the API's own
// resource writes update (Set): a line reads it and never waits on the store, so rendering
// an answer does no I/O. A name missing from it is said as "the property"
// or "the agent".
type Names struct {
	src ResourceNames
	mu  sync.RWMutex
	by  map[string]string
}

// NewNames is an empty cache over src.
func NewNames(src ResourceNames) *Names { return &Names{src: src, by: map[string]string{}} }

// Refresh replaces the cache with every display name src holds.
func (n *Names) Refresh(ctx context.Context) error {
	all, err := n.src.AllDisplayNames(ctx)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.by = all
	return nil
}

// Set records one resource's display name, as the store now holds it.
func (n *Names) Set(id, name string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if name == "" {
		delete(n.by, id)
		return
	}
	n.by[id] = name
}

// Lookup gives the display names of ids that the cache has; a nil Names
// has none.
func (n *Names) Lookup(ids []string) map[string]string {
	out := map[string]string{}
	if n == nil {
		return out
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	for _, id := range ids {
		if name, ok := n.by[id]; ok {
			out[id] = name
		}
	}
	return out
}

// Speaker words lines in lang with the display names of ids.
func (n *Names) Speaker(lang Lang, ids ...string) Speaker {
	return Speaker{Lang: lang, Names: n.Lookup(ids)}
}

package speech

import (
	"context"
	"sync"
)

// ResourceNames reads every resource's names by language tag, "" for the
// name said in every other language (booking.Resource.SpokenNames); the
// store implements it.
type ResourceNames interface {
	AllDisplayNames(ctx context.Context) (map[string]map[string]string, error)
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
	by  map[string]map[string]string
}

// NewNames is an empty cache over src.
func NewNames(src ResourceNames) *Names { return &Names{src: src, by: map[string]map[string]string{}} }

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

// Set records one resource's names, as the store now holds them (by
// language tag, "" for every other language).
func (n *Names) Set(id string, names map[string]string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(names) == 0 {
		delete(n.by, id)
		return
	}
	n.by[id] = names
}

// Lookup gives the names in lang of ids that the cache has: the
// language's own, else the one said in every language; a nil Names has
// none.
func (n *Names) Lookup(lang Lang, ids []string) map[string]string {
	out := map[string]string{}
	if n == nil {
		return out
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	for _, id := range ids {
		names := n.by[id]
		if name := names[string(lang)]; name != "" {
			out[id] = name
		} else if name := names[""]; name != "" {
			out[id] = name
		}
	}
	return out
}

// Speaker words lines in lang with the names of ids in lang.
func (n *Names) Speaker(lang Lang, ids ...string) Speaker {
	return Speaker{Lang: lang, Names: n.Lookup(lang, ids)}
}

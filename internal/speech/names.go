package speech

import (
	"context"
	"sync"

	"github.com/bookingsaga/bookingsaga/agency"
)

// ResourceNames reads every resource's names by language tag, "" for the
// name said in every other language (booking.Resource.SpokenNames), of
// the agency ctx acts for, and the deployment's agencies; the store
// implements it.
type ResourceNames interface {
	AllDisplayNames(ctx context.Context) (map[string]map[string]string, error)
	Agencies(ctx context.Context) ([]agency.Named, error)
}

// Names keeps resources' display names for the spoken lines, for the REST
// answers and the voice tools alike. It is a cache the wiring keeps filled
// (Refresh at start, then every so often), and that the API's own
// resource writes update (Set): a line reads it and never waits on the store, so rendering
// an answer does no I/O. A name missing from it is said as "the property"
// or "the agent". Each agency's resources are named apart: two agencies
// may use one resource id.
type Names struct {
	src ResourceNames
	mu  sync.RWMutex
	by  map[string]map[string]map[string]string // agency id, resource id, language
}

// NewNames is an empty cache over src.
func NewNames(src ResourceNames) *Names {
	return &Names{src: src, by: map[string]map[string]map[string]string{}}
}

// Refresh replaces the cache with every display name src holds, each
// agency's read as that agency.
func (n *Names) Refresh(ctx context.Context) error {
	agencies, err := n.src.Agencies(ctx)
	if err != nil {
		return err
	}
	by := make(map[string]map[string]map[string]string, len(agencies))
	for _, a := range agencies {
		if by[a.ID], err = n.src.AllDisplayNames(agency.With(ctx, a.Agency)); err != nil {
			return err
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.by = by
	return nil
}

// Set records one resource's names, of the agency ctx acts for, as the
// store now holds them (by language tag, "" for every other language).
func (n *Names) Set(ctx context.Context, id string, names map[string]string) {
	if n == nil {
		return
	}
	a := agency.From(ctx).ID
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(names) == 0 {
		delete(n.by[a], id)
		return
	}
	if n.by[a] == nil {
		n.by[a] = map[string]map[string]string{}
	}
	n.by[a][id] = names
}

// Lookup gives the names in lang of ids, of the agency ctx acts for, that
// the cache has: the language's own, else the one said in every
// language; a nil Names has none.
func (n *Names) Lookup(ctx context.Context, lang Lang, ids []string) map[string]string {
	out := map[string]string{}
	if n == nil {
		return out
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	mine := n.by[agency.From(ctx).ID]
	for _, id := range ids {
		names := mine[id]
		if name := names[string(lang)]; name != "" {
			out[id] = name
		} else if name := names[""]; name != "" {
			out[id] = name
		}
	}
	return out
}

// Speaker words lines in lang with the names of ids in lang, of the
// agency ctx acts for.
func (n *Names) Speaker(ctx context.Context, lang Lang, ids ...string) Speaker {
	return Speaker{Lang: lang, Names: n.Lookup(ctx, lang, ids)}
}

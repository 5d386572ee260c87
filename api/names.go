package api

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/internal/speech"
)

// ResourceNames reads display names; the store implements it.
type ResourceNames interface {
	DisplayNames(ctx context.Context, ids []string) (map[string]string, error)
}

// Names keeps resources' display names for the spoken lines, for the
// REST answers and the voice tools alike (the wiring makes one). An answer
// never waits on the store for a name: a miss is looked up within
// nameWait, and past it, or while the store is down, the line says "the
// property" instead. A name is re-read after nameTTL, and the cache holds
// at most maxNames.
type Names struct {
	src ResourceNames
	mu  sync.Mutex
	got map[string]nameEntry
}

type nameEntry struct {
	name string
	at   time.Time
}

const (
	nameWait = 150 * time.Millisecond
	nameTTL  = time.Minute
	// maxNames bounds the cache: ids are the tools' arguments, which a
	// model may make up.
	maxNames = 1000
)

// NewNames keeps the display names src gives.
func NewNames(src ResourceNames) *Names { return &Names{src: src, got: map[string]nameEntry{}} }

// Lookup gives the display names of ids it has or can read within
// nameWait; a nil Names has none.
func (n *Names) Lookup(ctx context.Context, ids []string) map[string]string {
	out := map[string]string{}
	if n == nil || n.src == nil {
		return out
	}
	now := time.Now()
	var stale []string
	n.mu.Lock()
	for _, id := range ids {
		e, ok := n.got[id]
		if ok {
			out[id] = e.name
		}
		if id != "" && (!ok || now.Sub(e.at) > nameTTL) {
			stale = append(stale, id)
		}
	}
	n.mu.Unlock()
	if len(stale) == 0 {
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, nameWait)
	defer cancel()
	fresh, err := n.src.DisplayNames(ctx, stale)
	if err != nil {
		Logger(ctx).Warn("display names unread; the line names no resource", zap.Error(err))
		return out
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.got)+len(stale) > maxNames {
		clear(n.got) // rare: the catalogue is smaller; start again
	}
	for _, id := range stale {
		n.got[id] = nameEntry{name: fresh[id], at: now}
		out[id] = fresh[id]
	}
	return out
}

// Speaker words lines in lang with the display names of ids, never
// waiting long for them.
func (n *Names) Speaker(ctx context.Context, lang speech.Lang, ids ...string) speech.Speaker {
	return speech.Speaker{Lang: lang, Names: n.Lookup(ctx, ids)}
}

package api

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
)

// names keeps resources' display names for the spoken lines. An answer
// never waits on the store for a name: a miss is looked up within
// nameWait, and past it, or while the store is down, the line says "the
// property" instead. A name is re-read after nameTTL, and the cache holds
// at most maxNames.
type names struct {
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

func (n *names) lookup(ctx context.Context, ids []string) map[string]string {
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
		ctxLogger(ctx).Warn("display names unread; the line names no resource", zap.Error(err))
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

package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// flood is one agent key of its own sending MCP writes as fast as it is
// answered, none with a conversation_id, so that each mints a
// conversation: the edge must keep it to its share, and the callers'
// key must still be let in (Options.Flooders).
type flood struct {
	urls []string
	key  string
	cat  catalogue
	http *http.Client
	// calls and shed count the flood's calls and those answered "at
	// capacity"; callerShed counts the callers' calls answered so.
	calls, shed, callerShed atomic.Int64
}

// FloodResult is what the flooding key and the callers met at the edge.
type FloodResult struct {
	Flooders    int
	Calls, Shed int64
	// CallerShed is how many of the callers' calls were answered "at
	// capacity".
	CallerShed int64
}

// run sends select_slot over MCP until ctx ends, from flooder i.
func (f *flood) run(ctx context.Context, i int) {
	for n := 0; ctx.Err() == nil; n++ {
		args := map[string]any{"property_id": f.cat.properties[n%len(f.cat.properties)], "agent_id": f.cat.agents[n%len(f.cat.agents)],
			"time_zone": "Europe/Paris", "starts_at": f.cat.starts[n%len(f.cat.starts)].Format(time.RFC3339), "duration_minutes": 30}
		body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": n, "method": "tools/call",
			"params": map[string]any{"name": "select_slot", "arguments": args}})
		if err != nil {
			return
		}
		served, shed := f.post(ctx, f.urls[(i+n)%len(f.urls)]+"/v1/mcp", body)
		if served {
			f.calls.Add(1)
		}
		if shed {
			// Sent again at once, a shed call costs the box the CPU the
			// fault suite shares (a flood from afar pays its round trip):
			// the flood keeps its places, not a spin.
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// post sends one MCP request and counts a call answered at capacity; it
// reports whether an answer came, and whether it was that.
func (f *flood) post(ctx context.Context, url string, body []byte) (served, shed bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return false, false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+f.key)
	res, err := f.http.Do(req)
	if err != nil {
		return false, false
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if shed = strings.Contains(string(raw), "at capacity"); shed {
		f.shed.Add(1)
	}
	return true, shed
}

// result is the flood's counts.
func (f *flood) result(flooders int) *FloodResult {
	return &FloodResult{Flooders: flooders, Calls: f.calls.Load(), Shed: f.shed.Load(), CallerShed: f.callerShed.Load()}
}

// String is the flood's line in the report.
func (r *FloodResult) String() string {
	return fmt.Sprintf("one key flooding MCP writes with %d at once: %d calls, %d shed (%.0f%%); the callers' calls shed: %d",
		r.Flooders, r.Calls, r.Shed, 100*float64(r.Shed)/float64(max(r.Calls, 1)), r.CallerShed)
}

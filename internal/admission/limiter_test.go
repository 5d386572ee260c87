package admission

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// service is a simulated deployment: servers run the calls in flight,
// sharing them evenly, and each call needs work of one server; so latency
// is work up to servers in flight, then rises with each call more (a
// queue, as Temporal and PostgreSQL form past saturation). Time is
// simulated in milliseconds: no clock, no sleeps.
type service struct {
	servers int
	work    float64 // milliseconds of one server per call
}

// phase is an offered rate, in calls a second, for a while.
type phase struct {
	rate    float64
	seconds int
}

// outcome is what one phase's last settle seconds saw.
type outcome struct {
	offered, shed int
	latencies     []time.Duration
	limit         int
}

func (o outcome) p95() time.Duration {
	if len(o.latencies) == 0 {
		return 0
	}
	s := slices.Clone(o.latencies)
	slices.Sort(s)
	return s[(len(s)*95+99)/100-1]
}

// run offers each phase to the service through l, and reports each
// phase's outcome over its last settle seconds (the first ones are the
// limiter finding its way).
func (svc service) run(l *Limiter, settle int, phases ...phase) []outcome {
	type call struct {
		left  float64
		start int
	}
	var calls []call
	var out []outcome
	now, due := 0, 0.0
	for _, p := range phases {
		var o outcome
		end := now + p.seconds*1000
		for ; now < end; now++ {
			counted := now >= end-settle*1000
			for due += p.rate / 1000; due >= 1; due-- {
				if counted {
					o.offered++
				}
				if l.Enter(key("k")) {
					calls = append(calls, call{left: svc.work, start: now})
				} else if counted {
					o.shed++
				}
			}
			share := min(1, float64(svc.servers)/float64(max(1, len(calls))))
			kept := calls[:0]
			for _, c := range calls {
				if c.left -= share; c.left > 0 {
					kept = append(kept, c)
					continue
				}
				took := time.Duration(now+1-c.start) * time.Millisecond
				l.Done(key("k"), took)
				if counted {
					o.latencies = append(o.latencies, took)
				}
			}
			calls = kept
		}
		o.limit = l.Limit()
		out = append(out, o)
	}
	return out
}

func setup(t *testing.T, cfg Config) *Limiter {
	t.Helper()
	l := New(cfg)
	require.NotNil(t, l)
	return l
}

// At half its capacity the service is left alone; at twice it, the limit
// settles where admitted calls meet the target and the excess is refused;
// when load falls back, nothing is refused again.
func TestTheLimitSettlesNearTheTargetAndRecovers(t *testing.T) {
	t.Parallel()
	svc := service{servers: 10, work: 50} // 200 calls a second at most
	l := setup(t, Config{Target: 300 * time.Millisecond, Max: 256, Min: 4})
	got := svc.run(l, 10, phase{100, 15}, phase{400, 40}, phase{100, 15})
	light, saturated, after := got[0], got[1], got[2]
	for i, o := range got {
		t.Logf("phase %d: offered %d, refused %d, p95 %s, limit %d", i+1, o.offered, o.shed, o.p95(), o.limit)
	}

	require.Zero(t, light.shed, "under capacity nothing is refused")
	require.LessOrEqual(t, light.p95(), 60*time.Millisecond)

	require.Greater(t, saturated.shed*100, saturated.offered*40, "about half refused at twice capacity")
	require.LessOrEqual(t, saturated.p95(), 360*time.Millisecond, "admitted calls within the target and a fifth")
	require.GreaterOrEqual(t, saturated.p95(), 150*time.Millisecond, "near the target, not starved far below it")
	served := len(saturated.latencies)
	require.Greater(t, served*100, 190*10*90, "still serving at least 90 %% of capacity: %d in 10 s", served)

	require.Zero(t, after.shed, "load fell: nothing refused")
	require.LessOrEqual(t, after.p95(), 60*time.Millisecond)
	require.GreaterOrEqual(t, after.limit, 10, "the limit grew back past what the service needs")
}

// Light load leaves the limit near what it needs, not at Max, so that a
// surge is admitted in proportion and its first seconds already meet the
// target: a limit left at Max let the surge's first burst in whole.
func TestASurgeAfterLightLoadIsHeldFromItsFirstSeconds(t *testing.T) {
	t.Parallel()
	svc := service{servers: 10, work: 50} // 200 calls a second at most
	l := setup(t, Config{Target: 300 * time.Millisecond, Max: 256, Min: 1})
	got := svc.run(l, 5, phase{100, 15}, phase{400, 5})
	light, surge := got[0], got[1]
	t.Logf("light: limit %d; surge's first 5 s: offered %d, refused %d, p95 %s", light.limit, surge.offered, surge.shed, surge.p95())
	require.Zero(t, light.shed)
	require.LessOrEqual(t, light.limit, 32, "light load: the limit follows what is in flight")
	require.LessOrEqual(t, surge.p95(), 450*time.Millisecond, "the surge's first seconds within the target and a half")
	require.Greater(t, len(surge.latencies)*100, 190*5*85, "still serving at least 85 %% of capacity: %d in 5 s", len(surge.latencies))
}

// A service slower than half the target even unloaded is run at twice its
// own floor, not starved to the minimum.
func TestASlowServiceIsAimedAtItsOwnFloor(t *testing.T) {
	t.Parallel()
	svc := service{servers: 8, work: 400} // 20 calls a second, 400 ms each
	l := setup(t, Config{Target: 300 * time.Millisecond, Max: 256, Min: 2})
	got := svc.run(l, 20, phase{10, 20}, phase{60, 60})
	require.Zero(t, got[0].shed)
	saturated := got[1]
	t.Logf("saturated: offered %d, refused %d, p95 %s, limit %d", saturated.offered, saturated.shed, saturated.p95(), saturated.limit)
	require.Positive(t, saturated.shed, "past saturation, calls are refused")
	require.LessOrEqual(t, saturated.p95(), 1000*time.Millisecond, "about twice the 400 ms floor")
	require.Greater(t, saturated.limit, 8, "not starved below what the servers run")
}

// The limit never leaves [Min, Max]; no limiter admits every call.
func TestTheLimitKeepsItsBounds(t *testing.T) {
	t.Parallel()
	l := setup(t, Config{Max: 6, Min: 3, Window: 4})
	round := func(took time.Duration) {
		n := 0
		for l.Enter(key("k")) {
			n++
		}
		for range n {
			l.Done(key("k"), took)
		}
	}
	round(time.Millisecond) // the floor: a millisecond
	require.Equal(t, 6, l.Limit(), "it starts at Max")
	for range 10 {
		round(5 * time.Second)
	}
	require.Equal(t, 3, l.Limit(), "slow calls: down to Min, no lower")
	for range 20 {
		round(time.Millisecond)
	}
	require.Equal(t, 6, l.Limit(), "fast calls under a full limit: back to Max, no higher")
	var none *Limiter
	require.Nil(t, New(Config{}))
	require.True(t, none.Enter(key("k")))
	require.Zero(t, none.Limit(), "no limiter, no limit")
	none.Done(key("k"), time.Second)
}

func TestInFlightIsToldInOrder(t *testing.T) {
	t.Parallel()
	var told []int
	l := setup(t, Config{Max: 2, OnInFlight: func(n int) { told = append(told, n) }})
	require.True(t, l.Enter(key("k")))
	require.True(t, l.Enter(key("k")))
	require.False(t, l.Enter(key("k")))
	l.Done(key("k"), time.Millisecond)
	l.Done(key("k"), time.Millisecond)
	require.Equal(t, []int{1, 2, 1, 0}, told)
}

// One key flooding the edge holds at most its share: alone, three
// quarters of the limit, so another key's call is let in; with two keys
// holding places, half each, so each place the flood gives back goes to
// the quiet key until it has its half.
func TestOneKeyCannotTakeEveryPlace(t *testing.T) {
	t.Parallel()
	l := New(Config{Max: 8, Min: 8})
	flood := 0
	for l.Enter(key("flood")) {
		flood++
	}
	require.Equal(t, 6, flood, "three quarters of eight")
	require.True(t, l.Enter(key("quiet")), "the quiet key is let in")
	require.False(t, l.Enter(key("flood")), "the flood still is not")
	require.True(t, l.Enter(key("quiet")), "two keys share eight: the quiet key is under its four")
	require.False(t, l.Enter(key("quiet")), "the limit is full: eight places, six of them the flood's")
	l.Done(key("flood"), time.Millisecond)
	require.False(t, l.Enter(key("flood")), "two keys share eight: the flood holds five, over its four")
	require.True(t, l.Enter(key("quiet")), "the quiet key, under its four, takes the place given back")
	flood--
	for range flood {
		l.Done(key("flood"), time.Millisecond)
	}
	require.True(t, l.Enter(key("flood")))
}

// key is a call from key k of the default agency.
func key(k string) Caller { return Caller{Agency: "default", Key: k} }

// One agency's keys flooding the edge together hold at most the agency's
// share once a second agency calls: alone, three quarters; with two
// agencies holding places, half each, however many keys each has.
func TestOneAgencyCannotTakeEveryPlace(t *testing.T) {
	t.Parallel()
	l := New(Config{Max: 8, Min: 8})
	quiet := Caller{Agency: "lyon", Key: "lyon-agent"}
	require.True(t, l.Enter(quiet), "a second agency calls")
	l.Done(quiet, time.Millisecond)

	flood := 0
	for i := 0; l.Enter(Caller{Agency: "paris", Key: fmt.Sprint("paris-", i)}); i++ {
		flood++
	}
	require.Equal(t, 6, flood, "three quarters of eight, over six keys each under its own share")
	require.True(t, l.Enter(quiet), "the other agency is let in")
	require.True(t, l.Enter(quiet), "two agencies share eight: lyon is under its four")
	require.False(t, l.Enter(quiet), "the limit is full")
	l.Done(Caller{Agency: "paris", Key: "paris-0"}, time.Millisecond)
	require.False(t, l.Enter(Caller{Agency: "paris", Key: "paris-new"}), "paris holds five, over its four, whichever key asks")
	require.True(t, l.Enter(quiet), "lyon, under its four, takes the place given back")
}

// A deployment of one agency holds its keys to their shares alone: the
// agency's calls may fill every place.
func TestOneAgencyAloneMayFillEveryPlace(t *testing.T) {
	t.Parallel()
	l := New(Config{Max: 8, Min: 8})
	for i := range 8 {
		require.True(t, l.Enter(key(fmt.Sprint("k", i))), "call %d", i)
	}
	require.False(t, l.Enter(key("k8")), "the limit is full")
}

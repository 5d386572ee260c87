package chaos

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookingsaga/bookingsaga/app/devstack"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// Serve runs the fault suite's processes with no process faults (the
// mirrors' at o.MirrorFaultRate) and the dev stack's demo catalogue, and
// each worker's profiles served, until ctx ends, and prints the soak's command
// line for them: the two APIs, Temporal, the fakes, and every process by
// pid, so that the soak prints what a booking costs in each (BENCHMARKS.md).
// The fakes run in this process, so "fakes" is its own share.
func Serve(ctx context.Context, o Options) error {
	o.Duration, o.Callers, o.Outage = time.Minute, 1, time.Second // unused by a serve; keeps validate's other checks
	if err := o.validate(); err != nil {
		return err
	}
	if o.TemporalStore == "" {
		o.TemporalStore = devstack.StorePostgres
	}
	if o.Progress == nil {
		o.Progress = os.Stdout // the command line is what a serve is for
	}
	c, err := newCluster(o.Dir, o.Binaries, o.TemporalStore, false)
	if err != nil {
		return err
	}
	defer c.stop()
	c.preload = []string{"pg_stat_statements"}
	// The workers serve their profiles, for where a booking's CPU goes.
	addrs, err := freeAddrs(len(slots))
	if err != nil {
		return err
	}
	c.workerPprof = map[string]string{}
	for i, slot := range slots {
		c.workerPprof[slot] = addrs[i]
	}
	for _, m := range devstack.DemoMailboxes {
		c.graph.AddMailbox(m)
	}
	if err := c.startAll(ctx); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, c.dbURL)
	if err != nil {
		return fmt.Errorf("connect database: %w", err)
	}
	c.pool = pool
	if err := devstack.SeedDemo(ctx, store.New(pool, store.Config{})); err != nil {
		return err
	}
	// Faults in the mirrors, when asked for, to weigh what they cost the
	// commits (goodput) against a serve without.
	if err := c.mirrorFaults(o.MirrorFaultRate, o.Seed); err != nil {
		return err
	}
	fmt.Fprintf(o.Progress, "chaos: serving the demo catalogue on the fault suite's processes, mirror faults at %.0f%%, logs in %s; workers' profiles at %s; run:\n%s\n",
		100*o.MirrorFaultRate, o.Dir, c.pprofURLs(), c.soakCommand())
	<-ctx.Done()
	return nil
}

// soakCommand is the soak against this cluster, with each process named.
func (c *cluster) soakCommand() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	procs := []string{fmt.Sprintf("fakes=%d", os.Getpid()), fmt.Sprintf("temporal=%d", c.temporal.cmd.Process.Pid),
		fmt.Sprintf("store-postgres=%d", c.pg.Pid())}
	if c.temporalPG != nil {
		procs = append(procs, fmt.Sprintf("temporal-postgres=%d", c.temporalPG.Pid()))
	}
	for _, slot := range slots {
		procs = append(procs, fmt.Sprintf("worker-%s=%d", slot, c.workers[slot].cmd.Process.Pid),
			fmt.Sprintf("api-%s=%d", slot, c.apis[slot].cmd.Process.Pid))
	}
	return fmt.Sprintf("API_KEY=%s starter -temporal-address %s soak -api http://%s,http://%s -fake-calendar %s -fake-graph %s -processes %s -statements '%s'",
		c.apiKey, c.temporalAddr, c.apiAddrs["a"], c.apiAddrs["b"], c.calendarURL, c.graphURL, strings.Join(procs, ","), c.adminURL)
}

// pprofURLs are the workers' CPU profile addresses.
func (c *cluster) pprofURLs() string {
	var urls []string
	for _, slot := range slots {
		urls = append(urls, "http://"+c.workerPprof[slot]+"/debug/pprof/profile")
	}
	return strings.Join(urls, " ")
}

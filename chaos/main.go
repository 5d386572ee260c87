// Command chaos runs the fault suite: it builds the worker and starter,
// runs them with PostgreSQL and a Temporal server as separate processes,
// breaks each in turn while callers book through the agent API, and checks
// every answer against the store and the mirrors. It prints a table of
// calls, outcomes, recovery times and invariants, and exits 1 if any
// invariant was violated. With -serve it runs the same processes with no
// faults and prints the soak's command line for them instead.
//
//	go run ./chaos -duration 30m
//	go run ./chaos -serve
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/bookingsaga/bookingsaga/app/chaos"
	"github.com/bookingsaga/bookingsaga/app/devstack"
)

func main() {
	chaos.ServeRole(os.Args[1:])
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := run(ctx, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) (bool, error) {
	o := chaos.Options{Callers: 6, Think: 150 * time.Millisecond, MirrorFaultRate: 0.3, Outage: 3 * time.Second,
		Seed: uint64(time.Now().UnixNano()), Progress: os.Stdout}
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.DurationVar(&o.Duration, "duration", 2*time.Minute, "how long callers book while the faults go on; the faults cycle through it")
	fs.IntVar(&o.Callers, "callers", o.Callers, "concurrent callers")
	fs.IntVar(&o.Flooders, "flooders", o.Flooders, "a second agent key's MCP writes at once beside the callers, each minting a conversation; 0 for none")
	fs.DurationVar(&o.Think, "think", o.Think, "longest pause between a caller's calls")
	fs.Float64Var(&o.MirrorFaultRate, "mirror-faults", o.MirrorFaultRate, "share of calendar and CRM calls that misbehave (with -serve: none unless given)")
	fs.DurationVar(&o.Outage, "outage", o.Outage, "how long each broken process stays down")
	fs.BoolVar(&o.SecondAgency, "second-agency", true, "half the callers act for a second agency, lyon, with its own key, catalogue, calendars and mailboxes; off with -restore")
	fs.BoolVar(&o.Restore, "restore", false, "instead of the usual faults, restore the store from a backup taken mid-load (each outage long), and check what it lost is flagged and restored")
	fs.StringVar(&o.TemporalStore, "temporal-store", devstack.StorePostgres, "where the Temporal server keeps its state: postgres (its own cluster) or sqlite")
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "random seed for the callers and the mirror faults")
	serve := fs.Bool("serve", false, "instead of a run, serve the demo catalogue on the same processes with no faults until interrupted, and print the soak's command line for them (cost by process)")
	fs.StringVar(&o.Dir, "dir", "", "where the run keeps its data and logs (default: a new temporary directory, kept)")
	if err := fs.Parse(args); err != nil {
		return false, err
	}
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "bs-chaos-")
		if err != nil {
			return false, err
		}
		o.Dir = dir
	}
	self, err := os.Executable()
	if err != nil {
		return false, err
	}
	o.Binaries = chaos.Binaries{Temporal: []string{self, chaos.TemporalRole}}
	for _, b := range []struct {
		pkg string
		out *string
	}{{"./worker", &o.Binaries.Worker}, {"./starter", &o.Binaries.Starter}} {
		*b.out = filepath.Join(o.Dir, "bin", filepath.Base(b.pkg))
		if out, err := exec.Command("go", "build", "-o", *b.out, b.pkg).CombinedOutput(); err != nil {
			return false, errors.Join(fmt.Errorf("build %s: %s", b.pkg, out), err)
		}
	}
	if *serve {
		if !explicit(fs, "mirror-faults") {
			o.MirrorFaultRate = 0 // a serve is fault-free unless asked
		}
		return true, chaos.Serve(ctx, o)
	}
	rep, err := chaos.Run(ctx, o)
	if err != nil {
		return false, err
	}
	rep.Print(os.Stdout)
	return rep.OK(), nil
}

// explicit says whether the flag was given on the command line.
func explicit(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

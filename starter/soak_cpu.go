package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procCPU reads, from a /proc tree, the CPU time of named processes: each
// with its live descendants and the children it has reaped (a
// PostgreSQL postmaster's exited backends), so that a rate's cost is
// counted whichever process did the work.
type procCPU struct {
	root  string         // "/proc", or a test's tree
	tick  float64        // milliseconds per clock tick (USER_HZ: 100 on Linux)
	named map[string]int // name → root pid
	order []string
}

// parseProcesses reads -processes: "name=pid,name=pid"; the soak itself
// is always counted, as "soak".
func parseProcesses(root, spec string) (*procCPU, error) {
	p := &procCPU{root: root, tick: 10, named: map[string]int{"soak": os.Getpid()}, order: []string{"soak"}}
	for _, part := range strings.Split(spec, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, pidS, ok := strings.Cut(part, "=")
		pid, err := strconv.Atoi(pidS)
		if !ok || err != nil || pid <= 0 || name == "" {
			return nil, fmt.Errorf("processes: %q is not name=pid", part)
		}
		if _, dup := p.named[name]; dup {
			return nil, fmt.Errorf("processes: %q named twice", name)
		}
		p.named[name] = pid
		p.order = append(p.order, name)
	}
	return p, nil
}

// stat is one process's /proc/<pid>/stat: its parent, its own CPU ticks
// and its reaped children's.
type stat struct {
	ppid           int
	self, children int64
}

// readStat parses /proc/<pid>/stat; the command name, in parentheses, may
// hold spaces and parentheses itself, so fields count from the last ')'.
func readStat(path string) (stat, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return stat{}, err
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 15 {
		return stat{}, fmt.Errorf("%s: %d fields", path, len(f))
	}
	// Fields after the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
	n := func(i int) int64 { v, _ := strconv.ParseInt(f[i], 10, 64); return v }
	return stat{ppid: int(n(1)), self: n(11) + n(12), children: n(13) + n(14)}, nil
}

// sample is each named process's CPU milliseconds now.
func (p *procCPU) sample() map[string]float64 {
	all := map[int]stat{}
	entries, _ := os.ReadDir(p.root)
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if st, err := readStat(filepath.Join(p.root, e.Name(), "stat")); err == nil {
				all[pid] = st
			}
		}
	}
	byPid := map[int]string{}
	for name, pid := range p.named {
		byPid[pid] = name
	}
	out := map[string]float64{}
	for q, st := range all {
		name, own := byPid[q]
		if own {
			out[name] += float64(st.self+st.children) * p.tick
		} else if name = owner(all, byPid, q); name != "" {
			out[name] += float64(st.self) * p.tick
		}
	}
	return out
}

// owner is the named process nearest above q, "" for none: a process is
// counted once, under its nearest named ancestor.
func owner(all map[int]stat, byPid map[int]string, q int) string {
	for range len(all) {
		st, ok := all[q]
		if !ok || st.ppid <= 1 {
			return ""
		}
		if name, named := byPid[st.ppid]; named {
			return name
		}
		q = st.ppid
	}
	return ""
}

// costs are each named process's core-milliseconds per confirmed answer
// between two samples.
func (p *procCPU) costs(before, after map[string]float64, confirmed int) []string {
	out := make([]string, 0, len(p.order))
	for _, name := range p.order {
		per := 0.0
		if confirmed > 0 {
			per = (after[name] - before[name]) / float64(confirmed)
		}
		out = append(out, fmt.Sprintf("%s %.1f", name, per))
	}
	return out
}

// over runs one rate and notes each process's cost per confirmed answer.
func (p *procCPU) over(run func() soakRow) soakRow {
	before := p.sample()
	row := run()
	row.cpu = p.costs(before, p.sample(), row.confirmedCalls)
	return row
}

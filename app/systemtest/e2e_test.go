package systemtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/api/calendar/v3"

	"github.com/bookingsaga/bookingsaga/api"
	"github.com/bookingsaga/bookingsaga/app/devstack"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/gcal"
	"github.com/bookingsaga/bookingsaga/internal/health"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/msgraph/graphtest"
	"github.com/bookingsaga/bookingsaga/internal/pgserver"
	"github.com/bookingsaga/bookingsaga/internal/syncbuf"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// devStack is one `go run ./worker -dev` subprocess, as the README runs it,
// on free ports and a temporary data dir.
type devStack struct {
	t            *testing.T
	cmd          *exec.Cmd
	args         []string
	api, frontal string
	ui, pprof    string
	// dbURL is the stack's PostgreSQL, as its banner printed it.
	dbURL   string
	dataDir string
	// sms and mail are the fake Twilio's and the SMTP sink's lists, and
	// hubspot the HubSpot account's address.
	sms, mail, hubspot string
	stderr             *syncbuf.Buffer
	// keys are the API keys the stack printed at its last start, by name.
	keys map[string]string
}

// freeAddr is a free port for a dev stack to listen on, below the
// kernel's ephemeral range: a port from ":0" is drawn from that range, and
// between our closing it and the stack binding it an outgoing connection
// anywhere on the machine can take it as its local end (a CI run failed
// with "address already in use" so). Ports are handed out once per test
// binary, from a random start so that binaries running side by side
// rarely meet.
func freeAddr(t *testing.T) string {
	t.Helper()
	ports.Lock()
	defer ports.Unlock()
	if ports.next == 0 {
		ports.next = 20000 + rand.IntN(8000)
	}
	for ; ports.next < 32768; ports.next++ {
		addr := fmt.Sprintf("127.0.0.1:%d", ports.next)
		if ln, err := net.Listen("tcp", addr); err == nil {
			require.NoError(t, ln.Close())
			ports.next++
			return addr
		}
	}
	t.Fatal("no free port below 32768")
	return ""
}

var ports struct {
	sync.Mutex
	next int
}

func newDevStack(t *testing.T) *devStack {
	// Unix socket paths are short: keep the data dir near the root.
	// MkdirTemp makes it 0700, as a user's home is: when tests run as root,
	// PostgreSQL (which runs as postgres) can't enter it, and the stack
	// keeps its cluster elsewhere (pgserver.LocationFile).
	dir, err := os.MkdirTemp("", "bs-e2e-")
	require.NoError(t, err)
	d := &devStack{t: t, api: freeAddr(t), frontal: freeAddr(t), ui: freeAddr(t), pprof: freeAddr(t), dataDir: filepath.Join(dir, "data"),
		sms: freeAddr(t), mail: freeAddr(t), hubspot: freeAddr(t)}
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(d.dataDir, "postgres", pgserver.LocationFile)); err == nil {
			_ = os.RemoveAll(string(bytes.TrimSpace(b)))
		}
		_ = os.RemoveAll(dir)
	})
	d.args = []string{"-dev", "-data-dir", d.dataDir, "-api-listen", d.api,
		"-temporal-address", d.frontal, "-temporal-ui", d.ui, "-fake-calendar", freeAddr(t), "-fake-graph", freeAddr(t), "-fake-crm", freeAddr(t), "-fake-hubspot", d.hubspot, "-fake-sms", d.sms, "-fake-smtp", freeAddr(t), "-fake-mail", d.mail,
		"-sms-quiet-from", "0s", "-sms-quiet-to", "0s", "-metrics-listen", freeAddr(t), "-codec-listen", freeAddr(t),
		"-pprof-listen", d.pprof}
	return d
}

// start runs the stack and waits for its ready line.
func (d *devStack) start() {
	d.t.Helper()
	d.cmd = d.command()
	// Its own process group, so SIGINT reaches it as a terminal's Ctrl-C would.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := d.cmd.StdoutPipe()
	require.NoError(d.t, err)
	d.stderr = &syncbuf.Buffer{}
	d.cmd.Stderr = d.stderr
	require.NoError(d.t, d.cmd.Start())
	d.t.Cleanup(func() { _ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL) })
	ready := make(chan bool, 1)
	keys := map[string]string{}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			// The banner ends with how to stop; the keys come before.
			if f := strings.Fields(sc.Text()); len(f) == 3 && f[1] == "key" {
				keys[f[0]] = f[2]
			} else if len(f) > 1 && f[0] == "PostgreSQL" {
				d.dbURL = strings.Join(f[1:], " ")
			}
			if strings.Contains(sc.Text(), "Ctrl-C stops everything") {
				ready <- true
			}
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		require.True(d.t, ok, "the stack exited before it was ready: %s", tail(d.stderr.String()))
		d.keys = keys
	case <-time.After(5 * time.Minute): // the first `go run` also builds
		d.t.Fatalf("the stack was not ready in time: %s", tail(d.stderr.String()))
	}
}

// screenshots runs the README's screenshot script against the stack: it
// books, then photographs the saga and the list in headless Chromium. CI
// installs Debian's chromium (.ci/run); elsewhere a machine without it
// skips this step, with a note.
func (d *devStack) screenshots() {
	d.t.Helper()
	if _, err := exec.LookPath("chromium"); err != nil {
		require.Empty(d.t, os.Getenv("CI"), "CI must have chromium for the screenshot script: %v", err)
		d.t.Log("chromium is not installed: the screenshot script is not run")
		return
	}
	dir := d.t.TempDir()
	saga, list := filepath.Join(dir, "saga.png"), filepath.Join(dir, "list.png")
	cmd := exec.Command("bash", "scripts/screenshot.sh", saga, list, d.dataDir)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+d.frontal, "TEMPORAL_UI=http://"+d.ui, "DATABASE_URL="+d.dbURL)
	out, err := cmd.CombinedOutput()
	require.NoError(d.t, err, "%s", out)
	for _, png := range []string{saga, list} {
		b, err := os.ReadFile(png)
		require.NoError(d.t, err)
		require.True(d.t, bytes.HasPrefix(b, []byte("\x89PNG\r\n")), "%s is not a PNG", png)
		require.Greater(d.t, len(b), 20<<10, "%s is too small to show a page", png)
	}
}

// schedulingTour is the README's scheduling tour on the demo catalogue:
// a flat with its own hours, the Paris team offered as one, and a day's
// bookings from the CLI, which reads the store.
func (d *devStack) schedulingTour(day time.Time, key string) {
	d.t.Helper()
	res, err := d.get("/v1/resources/paris-bastille-5")
	require.NoError(d.t, err)
	var flat api.ResourceAnswer
	require.NoError(d.t, json.NewDecoder(res.Body).Decode(&flat))
	require.NoError(d.t, res.Body.Close())
	require.NotEmpty(d.t, flat.Rules.Hours, "the demo flat has its own hours")
	weekday := day
	for weekday.Weekday() == time.Sunday || weekday.Weekday() == time.Saturday {
		weekday = weekday.AddDate(0, 0, 1)
	}
	q := url.Values{"property_id": {"paris-bastille-5"}, "agent_pool": {"paris-team"},
		"from": {weekday.Add(-3 * time.Hour).Format(time.RFC3339)}, "to": {weekday.Add(9 * time.Hour).Format(time.RFC3339)}}
	res, err = d.get("/v1/availability?" + q.Encode())
	require.NoError(d.t, err)
	var av edge.AvailabilityAnswer
	require.NoError(d.t, json.NewDecoder(res.Body).Decode(&av))
	require.NoError(d.t, res.Body.Close())
	require.NotEmpty(d.t, av.Slots, "the team is offered within the flat's hours")
	for _, s := range av.Slots {
		at := s.LocalStart[len("2006-01-02T"):]
		require.True(d.t, at >= "10:00" && at < "13:00" || at >= "14:00" && at < "19:00", "offered %s, outside the flat's hours", at)
	}
	require.NotEmpty(d.t, d.dbURL, "the banner names the stack's PostgreSQL")
	cli := exec.Command("go", "run", "./starter", "-database-url", d.dbURL, "bookings", "-property", "paris-marais-12",
		"-day", day.Format(time.DateOnly))
	cli.Dir = "../.."
	out, err := cli.CombinedOutput()
	require.NoError(d.t, err, "%s", out)
	require.Contains(d.t, string(out), receipt.Reference(key), "the day's bookings list the booking")
}

// stop sends SIGINT, as Ctrl-C does, and waits for a clean exit.
func (d *devStack) stop() {
	d.t.Helper()
	require.NoError(d.t, syscall.Kill(-d.cmd.Process.Pid, syscall.SIGINT))
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case <-done:
		// `go run` itself exits 1 when interrupted, whatever the program
		// did; the worker's own log says whether it shut down cleanly.
		log := d.stderr.String()
		require.Contains(d.t, log, "worker stopped cleanly", tail(log))
		for _, line := range strings.Split(log, "\n") {
			// The embedded Temporal server may log its own shutdown races
			// (a task queue closing under a pending task); ours must not err.
			ours := !strings.Contains(line, `"caller":"log/zap_logger.go`)
			require.False(d.t, ours && strings.Contains(line, `"level":"error"`), line)
		}
	case <-time.After(time.Minute):
		d.t.Fatal("the stack did not stop within a minute of SIGINT")
	}
}

// post and get call the API with the stack's agent key.
func (d *devStack) post(path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, "http://"+d.api+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+d.keys["dev-agent"])
	return http.DefaultClient.Do(req)
}

func (d *devStack) get(path string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+d.api+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+d.keys["dev-agent"])
	return http.DefaultClient.Do(req)
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

// postgresRunning reports whether any process still runs a postgres on
// the stack's cluster, wherever it keeps it.
func (d *devStack) postgresRunning() bool {
	cluster := []byte(d.dataDir)
	if b, err := os.ReadFile(filepath.Join(d.dataDir, "postgres", pgserver.LocationFile)); err == nil {
		cluster = bytes.TrimSpace(b)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte("postgres")) && bytes.Contains(b, cluster) {
			return true
		}
	}
	return false
}

// healthy reports whether the stack's API answers its liveness check.
func (d *devStack) healthy() bool {
	res, err := http.Get("http://" + d.api + "/healthz")
	if err != nil {
		return false
	}
	defer res.Body.Close()
	return res.StatusCode == http.StatusOK
}

func (d *devStack) book(key string, start time.Time) receipt.Receipt {
	d.t.Helper()
	return d.bookWith(key, "agent-claire", start)
}

func (d *devStack) bookWith(key, agent string, start time.Time) receipt.Receipt {
	d.t.Helper()
	body, err := json.Marshal(map[string]any{"request_key": key, "property_id": "paris-marais-12", "agent_id": agent,
		"starts_at": start.Format(time.RFC3339), "time_zone": "Europe/Paris", "duration_minutes": 30,
		"expected_policy_version": devstack.DemoPolicy})
	require.NoError(d.t, err)
	res, err := d.post("/v1/bookings", body)
	require.NoError(d.t, err)
	return decodeReceipt(d.t, res)
}

func (d *devStack) receipt(key string) receipt.Receipt {
	d.t.Helper()
	res, err := d.get("/v1/bookings/" + key)
	require.NoError(d.t, err)
	return decodeReceipt(d.t, res)
}

// settledReceipt is receipt as a client reads it under load: a call the
// API turned away at capacity (503, retryable: nothing was done) is sent
// again, as the answer says to.
func (d *devStack) settledReceipt(key string) receipt.Receipt {
	d.t.Helper()
	var data []byte
	require.Eventually(d.t, func() bool {
		res, err := d.get("/v1/bookings/" + key)
		if err != nil {
			return false
		}
		defer res.Body.Close()
		data, err = io.ReadAll(res.Body)
		return err == nil && res.StatusCode != http.StatusServiceUnavailable
	}, 30*time.Second, 100*time.Millisecond, "the API kept turning the read away")
	var r receipt.Receipt
	require.NoError(d.t, json.Unmarshal(data, &r), string(data))
	return r
}

func decodeReceipt(t *testing.T, res *http.Response) receipt.Receipt {
	t.Helper()
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, string(data))
	var r receipt.Receipt
	require.NoError(t, json.Unmarshal(data, &r))
	return r
}

func TestDevStackEndToEnd(t *testing.T) {
	t.Parallel()
	d := newDevStack(t)
	d.start()
	require.True(t, d.healthy(), "/healthz")
	res, err := http.Get("http://" + d.api + "/readyz")
	require.NoError(t, err)
	var ready health.Readiness
	require.NoError(t, json.NewDecoder(res.Body).Decode(&ready))
	require.NoError(t, res.Body.Close())
	require.Equal(t, health.Readiness{Status: "ready"}, ready)
	req, err := http.NewRequest(http.MethodGet, "http://"+d.api+"/v1/ops/readiness", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+d.keys["dev-admin"])
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(res.Body).Decode(&ready))
	require.NoError(t, res.Body.Close())
	require.Equal(t, health.Readiness{Status: "ready", Checks: map[string]string{"temporal": "ok", "store": "ok"}, ZoneRules: localtime.Version()}, ready)
	res, err = http.Get("http://" + d.pprof + "/debug/pprof/goroutine?debug=1")
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode, "profiles for load tests")

	// The stack printed an agent key and an admin key, and keeps only
	// their hashes; the agent key may not change the catalogue.
	require.NotEmpty(t, d.keys["dev-agent"])
	require.NotEmpty(t, d.keys["dev-admin"])
	stored, err := os.ReadFile(filepath.Join(d.dataDir, "api-keys.json"))
	require.NoError(t, err)
	for _, secret := range d.keys {
		require.NotContains(t, string(stored), secret)
	}
	// The demo's key holder, as it is: changing nothing, whoever may.
	holder := []byte(`{"kind":"key_holder","capacity":1,"time_zone":"Europe/Paris"}`)
	for name, want := range map[string]int{"dev-agent": http.StatusForbidden, "dev-admin": http.StatusOK} {
		req, err := http.NewRequest(http.MethodPut, "http://"+d.api+"/v1/resources/keys-paris", bytes.NewReader(holder))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+d.keys[name])
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		require.Equal(t, want, res.StatusCode, name)
	}
	loc, err := localtime.LoadZone("Europe/Paris")
	require.NoError(t, err)
	day := time.Now().In(loc).AddDate(0, 0, 3)
	start := time.Date(day.Year(), day.Month(), day.Day(), 11, 0, 0, 0, loc)
	key := uuid.NewString()
	booked := d.book(key, start)
	require.Equal(t, receipt.StatusConfirmed, booked.Status)

	tc, err := client.Dial(client.Options{HostPort: d.frontal, Namespace: "default"}) // visibility only: no payloads to read
	require.NoError(t, err)
	query := fmt.Sprintf(`BookingStatus = "CONFIRMED" AND BookingProperty = "paris-marais-12" AND WorkflowId = %q`, key)
	require.Eventually(t, func() bool {
		res, err := tc.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: query})
		return err == nil && len(res.GetExecutions()) == 1
	}, 30*time.Second, 100*time.Millisecond, "the saga is found through the search attributes")
	tc.Close()

	d.screenshots()
	d.schedulingTour(start, key)
	d.requireTourAnswers(d.tour())
	d.writingTour()
	d.hubspotTour()
	d.staffByCLI(day)

	// An agent backend in a module of its own, through the public client.
	example := exec.Command("go", "run", "./book", "-temporal-address", d.frontal, "-policy", devstack.DemoPolicy,
		"-payload-keys", filepath.Join(d.dataDir, "payload-keys.json"))
	example.Dir = "../../examples"
	out, err := example.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "book: confirmed\nstatus: confirmed\ncancel: cancelled\n")

	d.stop()
	require.False(t, d.postgresRunning(), "no postgres is left behind")
	d.start()
	again := d.receipt(key)
	require.Equal(t, booked.BookingID, again.BookingID, "the booking and its workflow survive a restart")
	require.Equal(t, receipt.StatusConfirmed, again.Status)
	d.stop()
	require.False(t, d.postgresRunning())
}

// TestDevStackRestartsItsPostgreSQL: PostgreSQL's postmaster killed under
// the stack, while callers book, comes back by itself: readiness reports
// the outage while it lasts, bookings are confirmed again within 30 s, and
// nothing committed is lost.
func TestDevStackRestartsItsPostgreSQL(t *testing.T) {
	t.Parallel()
	d := newDevStack(t)
	d.start()
	loc, err := localtime.LoadZone("Europe/Paris")
	require.NoError(t, err)
	at := func(days, hour int) time.Time {
		d := time.Now().In(loc).AddDate(0, 0, days)
		return time.Date(d.Year(), d.Month(), d.Day(), hour, 0, 0, 0, loc)
	}
	key := uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, d.book(key, at(5, 10)).Status)

	// Callers keep booking, each on slots of its own, throughout.
	loadCtx, stopLoad := context.WithCancel(context.Background())
	var load sync.WaitGroup
	// The latest confirmed call: when it was sent, and when answered.
	var sent, answered atomic.Int64
	for caller := range 4 {
		load.Go(func() {
			for i := 0; loadCtx.Err() == nil; i++ {
				began := time.Now()
				if r, ok := d.tryBook(uuid.NewString(), at(10+caller*30+i/10, 8+i%10)); ok && r.Status == receipt.StatusConfirmed {
					answered.Store(time.Now().UnixNano())
					sent.Store(began.UnixNano())
				}
			}
		})
	}
	t.Cleanup(func() { stopLoad(); load.Wait() })

	var notReady atomic.Bool
	go func() {
		for loadCtx.Err() == nil {
			if res, err := http.Get("http://" + d.api + "/readyz"); err == nil {
				if res.StatusCode == http.StatusServiceUnavailable {
					notReady.Store(true)
				}
				res.Body.Close()
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()

	killed := time.Now()
	require.NoError(t, syscall.Kill(d.postmaster(), syscall.SIGKILL))
	require.Eventually(t, func() bool { return sent.Load() > killed.UnixNano() },
		30*time.Second, 50*time.Millisecond, "no booking sent after the kill was confirmed within 30 s")
	t.Logf("a booking sent after the kill was confirmed %s after it", time.Unix(0, answered.Load()).Sub(killed).Round(10*time.Millisecond))
	require.True(t, notReady.Load(), "readiness never reported the outage")
	stopLoad()
	require.Equal(t, receipt.StatusConfirmed, d.settledReceipt(key).Status, "nothing committed was lost")
	require.Contains(t, d.stderr.String(), "postgresql exited; restarting it")
}

// postmaster is the pid of the stack's PostgreSQL.
func (d *devStack) postmaster() int {
	d.t.Helper()
	cluster := filepath.Join(d.dataDir, "postgres")
	if b, err := os.ReadFile(filepath.Join(cluster, pgserver.LocationFile)); err == nil {
		cluster = string(bytes.TrimSpace(b))
	}
	pidFile, err := os.ReadFile(filepath.Join(cluster, "data", "postmaster.pid"))
	require.NoError(d.t, err)
	pid, err := strconv.Atoi(strings.SplitN(string(pidFile), "\n", 2)[0])
	require.NoError(d.t, err)
	return pid
}

// tryBook books through the API; ok is false when no receipt came back.
func (d *devStack) tryBook(key string, start time.Time) (receipt.Receipt, bool) {
	body, err := json.Marshal(map[string]any{"request_key": key, "property_id": "paris-loft-3",
		"agent_id": "agent-hugo", "starts_at": start.Format(time.RFC3339), "time_zone": "Europe/Paris",
		"duration_minutes": 30, "expected_policy_version": devstack.DemoPolicy})
	if err != nil {
		return receipt.Receipt{}, false
	}
	res, err := d.post("/v1/bookings", body)
	if err != nil {
		return receipt.Receipt{}, false
	}
	defer res.Body.Close()
	var r receipt.Receipt
	return r, json.NewDecoder(res.Body).Decode(&r) == nil
}

// TestDevStackFakesKeepTheirStateAcrossACrash: the whole stack killed
// (SIGKILL, no clean stop) comes back with the fake calendars' events,
// Google's and Microsoft 365's (Hugo's mailbox).
func TestDevStackFakesKeepTheirStateAcrossACrash(t *testing.T) {
	t.Parallel()
	d := newDevStack(t)
	calendarAddr := d.args[slices.Index(d.args, "-fake-calendar")+1]
	graphAddr := d.args[slices.Index(d.args, "-fake-graph")+1]
	inOutlook := func(key string) bool {
		res, err := http.Get("http://" + graphAddr + "/_fake/events/" + devstack.HugoMailbox)
		if err != nil {
			return false
		}
		defer res.Body.Close()
		var evs []graphtest.GraphEvent
		if json.NewDecoder(res.Body).Decode(&evs) != nil {
			return false
		}
		for _, ev := range evs {
			if slices.Contains(slices.Collect(maps.Values(ev.Properties)), key) {
				return true
			}
		}
		return false
	}
	events := func() []calendar.Event {
		res, err := http.Get("http://" + calendarAddr + "/_fake/events/paris-marais-12@demo.bookingsaga")
		if err != nil {
			return nil
		}
		defer res.Body.Close()
		var evs []calendar.Event
		if json.NewDecoder(res.Body).Decode(&evs) != nil {
			return nil
		}
		return evs
	}
	mirrored := func(key string) bool {
		for _, ev := range events() {
			if ev.Id == gcal.EventID(key) && ev.Status == "confirmed" {
				return true
			}
		}
		return false
	}
	d.start()
	loc, err := localtime.LoadZone("Europe/Paris")
	require.NoError(t, err)
	day := time.Now().In(loc).AddDate(0, 0, 6)
	key := uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, d.book(key, time.Date(day.Year(), day.Month(), day.Day(), 9, 0, 0, 0, loc)).Status)
	require.Eventually(t, func() bool { return mirrored(key) }, 30*time.Second, 100*time.Millisecond, "the event was written")
	hugo := uuid.NewString()
	require.Equal(t, receipt.StatusConfirmed, d.bookWith(hugo, "agent-hugo", time.Date(day.Year(), day.Month(), day.Day(), 11, 0, 0, 0, loc)).Status)
	require.Eventually(t, func() bool { return inOutlook(hugo) }, 30*time.Second, 100*time.Millisecond, "Hugo's event was written to Microsoft 365")

	require.NoError(t, syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL))
	_ = d.cmd.Wait()
	require.Eventually(t, func() bool { return !d.postgresRunning() }, 30*time.Second, 100*time.Millisecond, "the old stack is gone")
	d.start()
	require.True(t, mirrored(key), "the fake calendar kept its event through the crash")
	require.True(t, inOutlook(hugo), "so did the fake Microsoft 365 tenant")
}

// TestDevStackDrainsTheAPIBeforeTheWorker: a SIGINT under load. Calls in
// flight are answered by a worker still running, so no answer is a
// pending one; calls after the SIGINT find the API closed, and can go to
// another instance.
func TestDevStackDrainsTheAPIBeforeTheWorker(t *testing.T) {
	t.Parallel()
	d := newDevStack(t)
	d.start()
	loc, err := localtime.LoadZone("Europe/Paris")
	require.NoError(t, err)
	day := time.Now().In(loc).AddDate(0, 0, 7)
	var answered, pending atomic.Int32
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				at := time.Date(day.Year(), day.Month(), day.Day(), 9+w, 0, 0, 0, loc).Add(time.Duration(i%4) * 15 * time.Minute)
				body, err := json.Marshal(map[string]any{"request_key": uuid.NewString(), "property_id": "paris-marais-12",
					"agent_id": "agent-claire", "starts_at": at.Format(time.RFC3339), "time_zone": "Europe/Paris",
					"duration_minutes": 30, "expected_policy_version": devstack.DemoPolicy})
				require.NoError(t, err)
				res, err := d.post("/v1/bookings", body)
				if err != nil {
					continue // the API has closed: a caller goes elsewhere
				}
				var r receipt.Receipt
				_ = json.NewDecoder(res.Body).Decode(&r)
				_ = res.Body.Close()
				answered.Add(1)
				if r.Status == receipt.StatusPending {
					pending.Add(1)
				}
			}
		})
	}
	require.Eventually(t, func() bool { return answered.Load() >= 20 }, time.Minute, 10*time.Millisecond, "load is running")
	d.stop()
	close(stop)
	wg.Wait()
	require.Zero(t, pending.Load(), "of %d answers, none was left pending by a worker that stopped first", answered.Load())
}

func TestDevStackBadConfigurationSaysWhatToDo(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	d := newDevStack(t)
	d.args[slices.Index(d.args, "-api-listen")+1] = busy.Addr().String()
	out, err := d.command().CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "worker: "+busy.Addr().String()+" is in use")

	d = newDevStack(t)
	require.NoError(t, os.WriteFile(filepath.Dir(d.dataDir)+"/file", nil, 0o600))
	d.args[slices.Index(d.args, "-data-dir")+1] = filepath.Dir(d.dataDir) + "/file/data"
	out, err = d.command().CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "worker: data dir")
	require.Contains(t, string(out), "cannot be created")
}

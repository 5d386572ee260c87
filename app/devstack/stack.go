package devstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/api/enums/v1"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/internal/crm/crmtest"
	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
	"github.com/bookingsaga/bookingsaga/internal/gcal/gcaltest"
	"github.com/bookingsaga/bookingsaga/internal/httpserve"
	"github.com/bookingsaga/bookingsaga/internal/hubspot/hubspottest"
	"github.com/bookingsaga/bookingsaga/internal/mail/mailtest"
	"github.com/bookingsaga/bookingsaga/internal/msgraph/graphtest"
	"github.com/bookingsaga/bookingsaga/internal/pgserver"
	"github.com/bookingsaga/bookingsaga/internal/sms/smstest"
)

// Options configure the stack. Empty addresses turn a part off.
type Options struct {
	DataDir string
	// CodecEndpoint is the codec server the Web UI decodes payloads with.
	CodecEndpoint string
	// DatabaseURL, when set, is used instead of a PostgreSQL cluster in
	// StoreDir, whose database StoreDatabase is the store.
	DatabaseURL             string
	StoreDir, StoreDatabase string
	Frontend, UI            string
	Namespace               string
	SearchAttributes        map[string]enums.IndexedValueType
	// CalendarAddr, GraphAddr, CRMAddr, HubSpotAddr and SMSAddr serve
	// the fakes (Google Calendar, a Microsoft 365 tenant, the generic CRM,
	// a HubSpot account, Twilio); empty means not started (the real
	// service, say).
	CalendarAddr, GraphAddr, CRMAddr, HubSpotAddr, SMSAddr string
	// SMTPAddr serves the SMTP sink, and MailAddr its list of what it
	// took (GET /mail); empty SMTPAddr means none.
	SMTPAddr, MailAddr string
	Log                *zap.Logger
	// TemporalStore is where the embedded Temporal server keeps its state:
	// StorePostgres (the stack's own PostgreSQL cluster, as
	// docker-compose's Temporal does; about four times SQLite's saturated
	// rate here, BENCHMARKS.md) or StoreSQLite (in DataDir, one writer).
	// Empty is StorePostgres when the stack runs its own cluster, else
	// StoreSQLite.
	TemporalStore string
}

// Stack is the running embedded stack.
type Stack struct {
	// DatabaseURL is where the booking store is.
	DatabaseURL string
	// CalendarURL, GraphURL, CRMURL, HubSpotURL and SMSURL are the fakes'
	// roots, when started.
	CalendarURL, GraphURL, CRMURL, HubSpotURL, SMSURL string
	// SMTPAddr is the SMTP sink's address, and MailURL its list's root.
	SMTPAddr, MailURL string

	opts Options
	// pgMu guards pg, which the supervisor replaces when PostgreSQL dies.
	pgMu sync.Mutex
	pg   *pgserver.Server
	// stopping ends the supervisor; supervised, set when it starts, is
	// closed when it has ended.
	stopping   chan struct{}
	supervised chan struct{}
	temporal   *Temporal
	kept       []keptFake
	sms        *smstest.Twilio
	mail       *mailtest.Sink
	servers    []*http.Server
}

// Start brings the parts up in dependency order; on failure it stops what
// it started and says what to do in one line.
func Start(ctx context.Context, o Options) (_ *Stack, err error) {
	s := &Stack{opts: o, DatabaseURL: o.DatabaseURL, stopping: make(chan struct{})}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	if o.TemporalStore != "" && o.TemporalStore != StoreSQLite && o.TemporalStore != StorePostgres {
		return nil, fmt.Errorf("temporal-store must be %s or %s, got %q", StoreSQLite, StorePostgres, o.TemporalStore)
	}
	if err := writableDir(o.DataDir); err != nil {
		return nil, err
	}
	if err := portsFree(o.Frontend, o.UI, o.CalendarAddr, o.GraphAddr, o.CRMAddr, o.HubSpotAddr, o.SMSAddr); err != nil {
		return nil, err
	}
	if s.DatabaseURL == "" {
		if err := s.startPostgres(ctx); err != nil {
			return nil, err
		}
		s.supervised = make(chan struct{})
		go s.supervise()
	}
	to := TemporalOptions{DataDir: o.DataDir, Frontend: o.Frontend, UI: o.UI, CodecEndpoint: o.CodecEndpoint,
		Namespace: o.Namespace, SearchAttributes: o.SearchAttributes, Log: o.Log}
	store := o.TemporalStore
	if store == "" && s.pg != nil {
		store = StorePostgres
	}
	if store == StorePostgres {
		if s.pg == nil {
			return nil, errors.New("temporal-store postgres keeps Temporal in the dev stack's own PostgreSQL: leave DATABASE_URL unset")
		}
		to.Postgres = &PostgresTemporal{SocketDir: s.pg.SocketDir(), Admin: s.pg.ConnString("postgres")}
	}
	if s.temporal, err = StartTemporal(to); err != nil {
		return nil, err
	}
	if err := s.startFakes(); err != nil {
		return nil, err
	}
	return s, nil
}

func writableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("data dir %s cannot be created (%w): pick another with -data-dir", dir, err)
	}
	probe := filepath.Join(dir, ".write-probe")
	if err := os.WriteFile(probe, nil, 0o600); err != nil {
		return fmt.Errorf("data dir %s is not writable (%w): fix its permissions or pick another with -data-dir", dir, err)
	}
	return os.Remove(probe)
}

func (s *Stack) startPostgres(ctx context.Context) error {
	dir, err := filepath.Abs(s.opts.StoreDir)
	if err != nil {
		return err
	}
	pg, err := pgserver.Start(ctx, pgserver.Options{Dir: dir, Durable: true})
	s.pgMu.Lock()
	s.pg = pg
	s.pgMu.Unlock()
	if errors.Is(err, pgserver.ErrNoBinaries) {
		return fmt.Errorf("%w; or set DATABASE_URL to an existing server", err)
	}
	if err != nil {
		return fmt.Errorf("start postgresql in %s: %w", dir, err)
	}
	owner, err := CreateDatabase(ctx, pg.ConnString("postgres"), s.opts.StoreDatabase, StoreOwner)
	if err != nil {
		return err
	}
	if s.DatabaseURL == "" { // a restart finds it where it was
		s.DatabaseURL = pg.ConnStringAs(s.opts.StoreDatabase, owner)
	}
	return nil
}

// StoreOwner is the dev stack's login to its store: it owns the schema
// and is no superuser, so the agencies' row-level security holds in the
// dev stack as in a deployment (docs/security.md).
const StoreOwner = "bookingsaga"

// supervise restarts PostgreSQL when it dies (a crash, a kill), with
// backoff, until the stack stops. Its clients reconnect by themselves:
// the socket and the database stay where they were, and nothing it had
// committed is lost.
func (s *Stack) supervise() {
	defer close(s.supervised)
	for {
		s.pgMu.Lock()
		exited := s.pg.Exited()
		s.pgMu.Unlock()
		select {
		case <-s.stopping:
			return
		case <-exited:
		}
		s.logErr("postgresql exited; restarting it", errors.New("postgresql exited"))
		for delay := 100 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err := s.startPostgres(ctx)
			cancel()
			if err == nil {
				break
			}
			s.logErr("restart postgresql", err)
			select {
			case <-s.stopping:
				return
			case <-time.After(delay):
			}
		}
	}
}

// CreateDatabase makes database name, owned by owner (made if missing),
// unless it is there, and returns the login that owns it: a data dir made
// before the store had an owner of its own keeps the superuser's.
func CreateDatabase(ctx context.Context, admin, name, owner string) (string, error) {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", fmt.Errorf("connect postgresql: %w", err)
	}
	defer conn.Close(ctx)
	var has string
	err = conn.QueryRow(ctx, "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = $1", name).Scan(&has)
	if err == nil {
		return has, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("look for database %s: %w", name, err)
	}
	role := pgx.Identifier{owner}.Sanitize()
	if _, err := conn.Exec(ctx, `DO $$ BEGIN CREATE ROLE `+role+` LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`); err != nil {
		return "", fmt.Errorf("create role %s: %w", owner, err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" OWNER "+role); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return owner, nil
}

// startFakes serves the fakes the options name, the kept ones restored
// from the data dir.
func (s *Stack) startFakes() error {
	var err error
	if s.opts.GraphAddr != "" {
		if s.GraphURL, err = s.startKept("graph", s.opts.GraphAddr, graphtest.NewGraph(GraphApp, DemoMailboxes...)); err != nil {
			return err
		}
	}
	if s.opts.CalendarAddr != "" {
		if s.CalendarURL, err = s.startKept("calendar", s.opts.CalendarAddr, gcaltest.NewCalendar()); err != nil {
			return err
		}
	}
	if s.opts.CRMAddr != "" {
		if s.CRMURL, err = s.startKept("crm", s.opts.CRMAddr, crmtest.NewCRM(CRMToken)); err != nil {
			return err
		}
	}
	// The demo catalogue's New York agency keeps HubSpot.
	if s.opts.HubSpotAddr != "" {
		if s.HubSpotURL, err = s.startKept("hubspot", s.opts.HubSpotAddr, hubspottest.New(HubSpotToken)); err != nil {
			return err
		}
	}
	if s.opts.SMSAddr != "" {
		// The texts are the tour's to read (GET /messages); they are not
		// kept across restarts, as a phone's inbox is not the service's.
		s.sms = smstest.New(TwilioAccount, TwilioToken)
		if err := s.serve(s.opts.SMSAddr, s.sms); err != nil {
			return err
		}
		s.SMSURL = "http://" + s.opts.SMSAddr
	}
	return s.startMail()
}

// keptServer is a fake kept across the stack's restarts in its data
// dir, served, with the faults it holds calls in (Release).
type keptServer interface {
	fakeserver.Kept
	http.Handler
	Release()
}

// keptFake is a kept fake and the name of its file.
type keptFake struct {
	name string
	fake keptServer
}

// startKept keeps fake in its file in the data dir and serves it on
// addr; it answers the fake's root.
func (s *Stack) startKept(name, addr string, fake keptServer) (string, error) {
	if err := fake.Keep(s.fakeFile(name)); err != nil {
		return "", err // and Stop must not save an empty fake over the file
	}
	s.kept = append(s.kept, keptFake{name: name, fake: fake})
	if err := s.serve(addr, fake); err != nil {
		return "", err
	}
	return "http://" + addr, nil
}

// startMail runs the SMTP sink and its list; like the texts, the mail is
// not kept across restarts.
func (s *Stack) startMail() error {
	if s.opts.SMTPAddr == "" {
		return nil
	}
	s.mail = mailtest.New(MailUser, MailPassword)
	addr, err := s.mail.Start(s.opts.SMTPAddr)
	if err != nil {
		return fmt.Errorf("%s is in use: stop what uses it or pick another port with the flags: %w", s.opts.SMTPAddr, err)
	}
	s.SMTPAddr = addr
	if err := s.serve(s.opts.MailAddr, s.mail); err != nil {
		return err
	}
	s.MailURL = "http://" + s.opts.MailAddr
	return nil
}

// MailUser and MailPassword are the SMTP sink's login; MailFrom is the
// demo agency's address.
const (
	MailUser     = "dev-agency"
	MailPassword = "dev-smtp-password"
	MailFrom     = "visites@demo.bookingsaga.test"
)

// TwilioAccount and TwilioToken are the fake Twilio account's; TwilioFrom
// is its number.
const (
	TwilioAccount = "ACdev00000000000000000000000000000"
	TwilioToken   = "devtwiliotoken00000000000000000000"
	TwilioFrom    = "+33700000000"
)

// HubSpotToken is the fake HubSpot account's private app token.
const HubSpotToken = "pat-na1-dev-hubspot"

// CRMToken is the fake CRM's bearer token.
const CRMToken = "dev-crm-token"

// GraphApp is the fake Microsoft 365 tenant's app registration; the dev
// stack's worker signs in with its secret, the client credentials flow
// as against Entra ID.
var GraphApp = graphtest.GraphApp{TenantID: "00000000-0000-4000-8000-00000000de70", ClientID: "00000000-0000-4000-8000-0000000000a1",
	ClientSecret: "dev-graph-secret"}

func (s *Stack) fakeFile(name string) string { return filepath.Join(s.opts.DataDir, name+".json") }

func (s *Stack) serve(addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s is in use: stop what uses it or pick another port with the flags: %w", addr, err)
	}
	srv := httpserve.Server(h)
	s.servers = append(s.servers, srv)
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// Stop stops the fakes (saving their state), Temporal, then PostgreSQL.
func (s *Stack) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, k := range s.kept {
		k.fake.Release()
	}
	if s.sms != nil {
		s.sms.Release()
	}
	if s.mail != nil {
		s.logErr("stop smtp sink", s.mail.Close())
	}
	for _, srv := range s.servers {
		_ = srv.Shutdown(ctx)
	}
	for _, k := range s.kept {
		s.logErr("save "+k.name, k.fake.Save(s.fakeFile(k.name)))
	}
	if s.temporal != nil {
		s.temporal.Stop()
	}
	close(s.stopping)
	if s.supervised != nil {
		<-s.supervised
	}
	if s.pg != nil {
		s.pg.Stop()
	}
}

func (s *Stack) logErr(what string, err error) {
	if err != nil && s.opts.Log != nil {
		s.opts.Log.Error(what, zap.Error(err))
	}
}

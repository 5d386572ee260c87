// Package mailtest is an SMTP sink: a server that speaks SMTP (RFC 5321,
// with AUTH PLAIN, RFC 4954, when it has a login) through emersion's
// go-smtp and keeps every message it accepts, decoded, for tests and the
// dev stack (GET /mail on its HTTP handler). Faults are injected on
// "mail.send", played out the SMTP way: a 5xx fault is a 421 4.3.2
// "service not available" reply to the data, a 429 a 451 4.7.1 "try again
// later", DropAfterSave keeps the message and closes the connection
// before the reply, the lost-reply case. An address refused with Refuse
// gets 550 5.1.1 at RCPT, as a mailbox that does not exist does.
package mailtest

import (
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/bookingsaga/bookingsaga/internal/fakeserver"
)

// Op is the operation faults are injected on.
const Op = "mail.send"

// Sink is the fake server. Its zero value is not usable: see New.
type Sink struct {
	fakeserver.Faults
	user, pass string
	srv        *smtp.Server

	mu      sync.Mutex
	got     []Message
	refused map[string]bool
}

// New returns a sink; with a user, it asks for that login.
func New(user, pass string) *Sink {
	s := &Sink{user: user, pass: pass, refused: map[string]bool{}}
	s.srv = smtp.NewServer(backend{s})
	s.srv.Domain = "sink.bookingsaga.test"
	s.srv.AllowInsecureAuth = true // a local fake: no TLS to offer
	s.srv.ReadTimeout, s.srv.WriteTimeout = time.Minute, time.Minute
	s.srv.MaxMessageBytes = 1 << 20
	return s
}

// Start listens on addr ("127.0.0.1:0": any free port) and speaks SMTP
// there until Close; it returns the address it listens on.
func (s *Sink) Start(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	go func() { _ = s.srv.Serve(ln) }() // ends with Close
	return ln.Addr().String(), nil
}

// Close stops the server and lets go of held faults.
func (s *Sink) Close() error {
	s.Release()
	return s.srv.Close()
}

// Refuse makes addr a mailbox that does not exist.
func (s *Sink) Refuse(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused[strings.ToLower(addr)] = true
}

// Received lists the messages accepted, oldest first.
func (s *Sink) Received() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.got...)
}

// ServeHTTP lists the messages (GET /mail) and takes faults.
func (s *Sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := http.NewServeMux()
	m.HandleFunc("GET /mail", func(w http.ResponseWriter, r *http.Request) {
		fakeserver.WriteJSON(w, http.StatusOK, s.Received())
	})
	m.HandleFunc("/_fake/faults", fakeserver.FaultAdmin(&s.Faults))
	m.ServeHTTP(w, r)
}

type backend struct{ s *Sink }

func (b backend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{s: b.s, conn: c}, nil
}

// session is one SMTP conversation.
type session struct {
	s      *Sink
	conn   *smtp.Conn
	authed bool
	from   string
	to     []string
}

func (ss *session) AuthMechanisms() []string {
	if ss.s.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != ss.s.user || pass != ss.s.pass {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "authentication credentials invalid"}
		}
		ss.authed = true
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.s.user != "" && !ss.authed {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "authentication required"}
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.s.mu.Lock()
	refused := ss.s.refused[strings.ToLower(to)]
	ss.s.mu.Unlock()
	if refused {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "mailbox unavailable"}
	}
	ss.to = append(ss.to, to)
	return nil
}

// Data takes the message, with the fault for this send played around it.
func (ss *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	f := ss.s.Take(Op)
	if f.Latency > 0 {
		select {
		case <-time.After(f.Latency):
		case <-ss.s.Done():
		}
	}
	switch {
	case f.Status == http.StatusTooManyRequests:
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 7, 1}, Message: "injected fault: try again later"}
	case f.Status != 0:
		return &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 3, 2}, Message: "injected fault: service not available"}
	}
	msg, err := decode(ss.from, ss.to, raw)
	if err != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "message not understood: " + err.Error()}
	}
	ss.s.mu.Lock()
	ss.s.got = append(ss.s.got, msg)
	ss.s.mu.Unlock()
	if f.DropAfterSave || f.TimeoutAfterSave {
		_ = ss.conn.Conn().Close() // kept, and the reply lost
	}
	return nil
}

func (ss *session) Reset() { ss.from, ss.to = "", nil }

func (ss *session) Logout() error { return nil }

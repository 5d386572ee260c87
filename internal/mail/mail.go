// Package mail sends the caller's e-mails over SMTP with go-mail
// (net/smtp is frozen), each with the viewing as an iCalendar invitation
// so that the caller's own calendar follows the booking. Its fake, the
// SMTP sink mailtest, sits beside it.
package mail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// TLS is how the connection to the server is secured.
type TLS string

// The TLS modes: STARTTLS required (submission, port 587: the default),
// implicit TLS (port 465), or none (a relay on the same host, the fake).
const (
	TLSStartTLS TLS = "starttls"
	TLSImplicit TLS = "tls"
	TLSNone     TLS = "none"
)

// Config is an SMTP server, its login and the agency's sender address.
type Config struct {
	// Addr is host:port.
	Addr               string
	Username, Password string
	From               string
	TLS                TLS
	// Timeout bounds one send, connection included.
	Timeout time.Duration
}

// Sender sends e-mail through one SMTP server.
type Sender struct {
	host string
	opts []gomail.Option
	from string
}

// New checks cfg and builds a sender; it connects on each send.
func New(cfg Config) (*Sender, error) {
	host, port, err := net.SplitHostPort(cfg.Addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || host == "" || n <= 0 || n > 65535 {
		return nil, fmt.Errorf("mail: server %q is not host:port", cfg.Addr)
	}
	if err := gomail.NewMsg().From(cfg.From); err != nil {
		return nil, fmt.Errorf("mail: from %q is not an address", cfg.From)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Second
	}
	opts := []gomail.Option{gomail.WithPort(n), gomail.WithTimeout(cfg.Timeout)}
	switch cfg.TLS {
	case TLSStartTLS, "":
		opts = append(opts, gomail.WithTLSPortPolicy(gomail.TLSMandatory))
	case TLSImplicit:
		opts = append(opts, gomail.WithSSLPort(false))
	case TLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		return nil, fmt.Errorf("mail: tls %q: say starttls, tls or none", cfg.TLS)
	}
	if cfg.Username != "" {
		// PLAIN only over TLS, or to this host (go-mail's rule, net/smtp's).
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthPlain),
			gomail.WithUsername(cfg.Username), gomail.WithPassword(cfg.Password))
	}
	return &Sender{host: host, opts: opts, from: cfg.From}, nil
}

// Mail is one message to a caller.
type Mail struct {
	To, Subject, Text string
	// MessageID is the same for every try of one message, so a mailbox
	// that got it twice (a reply lost after the send) can tell.
	MessageID string
	Invite    *Invite
}

// ErrUndeliverable means the server refused the address or the message
// for good (a 5xx reply to RCPT or to the data): sending again cannot help.
var ErrUndeliverable = errors.New("the address can't take this message")

// Send sends m and returns its Message-ID. The server's own words are not
// kept: they often quote the address.
func (s *Sender) Send(ctx context.Context, m Mail) (string, error) {
	msg, err := s.message(m)
	if err != nil {
		return "", err
	}
	c, err := gomail.NewClient(s.host, s.opts...)
	if err != nil {
		return "", fmt.Errorf("send mail: %w", err)
	}
	err = c.DialAndSendWithContext(ctx, msg)
	var se *gomail.SendError
	switch {
	case errors.As(err, &se) && permanent(se):
		return "", fmt.Errorf("send mail: smtp %d %s: %w", se.ErrorCode(), se.EnhancedStatusCode(), ErrUndeliverable)
	case errors.As(err, &se):
		return "", fmt.Errorf("send mail: smtp %d %s (reason %d)", se.ErrorCode(), se.EnhancedStatusCode(), se.Reason)
	case err != nil:
		return "", errors.New("send mail: the server could not be reached or did not answer")
	}
	return m.MessageID, nil
}

// permanent is a 5xx refusal of the recipient or of the message itself;
// a refused login or sender is the agency's to fix, so it is retried.
func permanent(se *gomail.SendError) bool {
	if se.IsTemp() || se.ErrorCode() < 500 || se.ErrorCode() > 599 {
		return false
	}
	return se.Reason == gomail.ErrSMTPRcptTo || se.Reason == gomail.ErrSMTPDataClose
}

// message builds the MIME message: the text, and the invitation both as
// the text/calendar alternative calendar clients act on and as an .ics
// attachment for the rest.
func (s *Sender) message(m Mail) (*gomail.Msg, error) {
	msg := gomail.NewMsg()
	if err := msg.From(s.from); err != nil {
		return nil, fmt.Errorf("mail from: %w", err)
	}
	if err := msg.To(m.To); err != nil {
		return nil, errors.New("mail to: the address was refused")
	}
	msg.Subject(m.Subject)
	msg.SetMessageIDWithValue(m.MessageID)
	msg.SetDate()
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.Invite != nil {
		in := *m.Invite
		in.Organizer, in.Attendee = s.from, m.To
		ics, err := in.ICS()
		if err != nil {
			return nil, err
		}
		method := "REQUEST"
		if in.Cancel {
			method = "CANCEL"
		}
		msg.AddAlternativeString(gomail.ContentType("text/calendar; method="+method), string(ics))
		if err := msg.AttachReader("invite.ics", bytes.NewReader(ics), gomail.WithFileContentType("application/ics")); err != nil {
			return nil, fmt.Errorf("mail invite: %w", err)
		}
	}
	return msg, nil
}

package app

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/mail"
)

// SMTP is the server the callers' e-mails go through; no address means
// none are sent. The password comes from the environment only, so it is
// in no process listing.
type SMTP struct {
	Addr, Username, Password, From string
	// PasswordFile holds the password instead (a container secret).
	PasswordFile string
	TLS          string
}

func smtpFromEnv() SMTP {
	return SMTP{Addr: os.Getenv("SMTP_ADDR"), Username: os.Getenv("SMTP_USERNAME"), Password: os.Getenv("SMTP_PASSWORD"),
		PasswordFile: os.Getenv("SMTP_PASSWORD_FILE"), From: os.Getenv("MAIL_FROM"), TLS: cmp.Or(os.Getenv("SMTP_TLS"), string(mail.TLSStartTLS))}
}

func (c *SMTP) register(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "smtp-addr", c.Addr, "SMTP server (host:port) for the callers' e-mails; empty sends none (env SMTP_ADDR)")
	fs.StringVar(&c.Username, "smtp-username", c.Username, "its login; the password is env SMTP_PASSWORD only (env SMTP_USERNAME)")
	fs.StringVar(&c.PasswordFile, "smtp-password-file", c.PasswordFile, "a file holding the password, in place of SMTP_PASSWORD (env SMTP_PASSWORD_FILE)")
	fs.StringVar(&c.From, "mail-from", c.From, "the agency's address the e-mails and invitations come from (env MAIL_FROM)")
	fs.StringVar(&c.TLS, "smtp-tls", c.TLS, "starttls (submission, 587), tls (465) or none (a relay on this host) (env SMTP_TLS)")
}

func (c SMTP) validate() error {
	if c.Addr == "" {
		return nil
	}
	if c.From == "" {
		return errors.New("smtp-addr needs mail-from")
	}
	cfg, err := c.config(time.Second)
	if err == nil {
		_, err = mail.New(*cfg)
	}
	return err
}

// config is the sender's, its password read; nil when no server is set.
func (c SMTP) config(timeout time.Duration) (*mail.Config, error) {
	if c.Addr == "" {
		return nil, nil
	}
	password, err := secretOrFile(c.Password, c.PasswordFile)
	if err != nil {
		return nil, fmt.Errorf("smtp password: %w", err)
	}
	return &mail.Config{Addr: c.Addr, Username: c.Username, Password: password, From: c.From, TLS: mail.TLS(c.TLS), Timeout: timeout}, nil
}

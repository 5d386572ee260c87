// Package activities holds every side effect of the booking saga. Each
// activity is idempotent, keyed by request_key and the step, so Temporal
// may run it again after a timeout or a worker crash without harm.
package activities

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/uber-go/tally/v4"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/accounts"
	"github.com/bookingsaga/bookingsaga/internal/calendars"
	"github.com/bookingsaga/bookingsaga/internal/catalog"
	"github.com/bookingsaga/bookingsaga/internal/crm"
	"github.com/bookingsaga/bookingsaga/internal/egress"
	"github.com/bookingsaga/bookingsaga/internal/mail"
	"github.com/bookingsaga/bookingsaga/internal/retry"
	"github.com/bookingsaga/bookingsaga/internal/sms"
	"github.com/bookingsaga/bookingsaga/internal/speech"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// Activities holds the dependencies of every activity.
type Activities struct {
	Store *store.Store
	// RetentionElsewhere says the event log's retention runs in a process
	// of its own (starter retention, as the retention role): the worker's
	// login may not rewrite the log, and ApplyRetention leaves it be.
	RetentionElsewhere bool
	// Calendar, CRM, SMS and Mail are the deployment's accounts, which
	// serve the default agency (accounts.Book.For); nil means that mirror
	// is not kept. SMS and Mail send the callers' texts and e-mails; nil
	// sends none, and leaves them due.
	Calendar *calendars.Router
	CRM      *crm.Router
	SMS      *sms.Sender
	Mail     *mail.Sender
	// Accounts are each agency's own; nil is none.
	Accounts *accounts.Book
	// CRMLang is the agency's language, that of the CRM's titles.
	CRMLang speech.Lang
	// Temporal lets reconciliation find and tell stuck sagas; nil skips
	// that step.
	Temporal client.Client
	// Quiet is when no text message goes out, in the property's zone.
	Quiet booking.QuietHours
	// PublicURL is the root the callers reach the API at: their messages
	// link their own page under it. Empty sends no link.
	PublicURL string
	// Texts bound the texts sent: per number, per key, by country.
	Texts TextLimits
	// Resend lets reconciliation send a call answered pending again when
	// Temporal never got it; nil leaves such calls noted.
	Resend Resender
	// Metrics receives commit and drift counts; nil drops them.
	Metrics tally.Scope
	// Egress decides where webhook deliveries may go; nil refuses every
	// internal address, loopback included.
	Egress *egress.Guard
	// MirrorYield is how long a mirror's work (a calendar or CRM write, a
	// text or e-mail) waits for this worker's commits in flight to end
	// before it goes ahead; 0 does not wait.
	MirrorYield time.Duration
	// RecheckBudget bounds the commit's calendar re-check; past it the
	// store decides alone, flagged for reconciliation. Zero leaves the
	// share of the attempt's budget (recheckShare) as the only bound.
	RecheckBudget time.Duration

	turns commitsFirst

	webhookOnce   sync.Once
	webhookClient *http.Client

	catalogOnce sync.Once
	catalog     *catalog.Catalog
}

// reads is the catalogue over the same store and mirrors: the commit's
// calendar re-check and every read share its code (and its cache of the
// resources whose calendars are watched) with the API's.
func (a *Activities) reads() *catalog.Catalog {
	a.catalogOnce.Do(func() {
		a.catalog = &catalog.Catalog{Store: a.Store, Calendar: a.Calendar, CRM: a.CRM, Accounts: a.Accounts}
	})
	return a.catalog
}

// mirrors are the clients of ctx's agency's mirrors: its own accounts,
// and the deployment's for the default agency (accounts.Book.For).
func (a *Activities) mirrors(ctx context.Context) (accounts.Set, error) {
	set, err := a.Accounts.For(ctx, accounts.Set{Calendar: a.Calendar, CRM: a.CRM, SMS: a.SMS, Mail: a.Mail})
	if err != nil {
		return accounts.Set{}, fmt.Errorf("mirror accounts: %w", err)
	}
	return set, nil
}

// metrics is the scope of the counters, which name the agency ctx acts
// for (bounded: agency.Label).
func (a *Activities) metrics(ctx context.Context) tally.Scope {
	return a.histograms().Tagged(map[string]string{"agency": agency.From(ctx).Label()})
}

// histograms is the scope of the timers, which name no agency: a
// histogram's buckets times every agency would be most of the series.
func (a *Activities) histograms() tally.Scope {
	if a.Metrics == nil {
		return tally.NoopScope
	}
	return a.Metrics
}

// drift counts what reconciliation found, per category and action.
func (a *Activities) drift(ctx context.Context, category, action string, n int) {
	if n > 0 {
		a.metrics(ctx).Tagged(map[string]string{"category": category, "action": action}).Counter("drift_total").Inc(int64(n))
	}
}

// A conflict and a refusal are the store's answers, not failures: they are
// benign application errors, which the SDK neither counts as failed
// activities nor logs as errors, and never retries.
func conflictError(d booking.ConflictDetail) error {
	return temporal.NewApplicationErrorWithOptions("slot is taken", booking.ErrTypeConflict,
		temporal.ApplicationErrorOptions{NonRetryable: true, Category: temporal.ApplicationErrorCategoryBenign, Details: []any{d}})
}

func rejectedError(r *booking.Rejection) error {
	return temporal.NewApplicationErrorWithOptions(r.Error(), booking.ErrTypeRejected,
		temporal.ApplicationErrorOptions{NonRetryable: true, Category: temporal.ApplicationErrorCategoryBenign, Details: []any{*r}})
}

// storeError turns a store failure into an activity error: a rejection is
// final, anything else is technical and retried.
func storeError(op, key string, err error) error {
	var rej *booking.Rejection
	if errors.As(err, &rej) {
		return rejectedError(rej)
	}
	return fmt.Errorf("%s %s: %w", op, key, err)
}

// mirrorError classifies a calendar or CRM failure for Temporal: permanent
// ones stop the retries, rate limits pass their Retry-After on.
func mirrorError(op, key string, err error, permanent bool) error {
	msg := fmt.Sprintf("%s %s: %v", op, key, err)
	if permanent {
		return temporal.NewNonRetryableApplicationError(msg, booking.ErrTypeMirrorRefused, err)
	}
	if after, ok := retry.Transient(err); ok && after > 0 {
		return temporal.NewApplicationErrorWithOptions(msg, "MirrorUnavailable",
			temporal.ApplicationErrorOptions{Cause: err, NextRetryDelay: after})
	}
	return fmt.Errorf("%s %s: %w", op, key, err)
}

func appendDetail(d []string, s string) []string {
	if len(d) >= maxDetails {
		return d
	}
	return append(d, s)
}

func ignoreNotFound(err error) error {
	if errors.Is(err, booking.ErrNotFound) {
		return nil
	}
	return err
}

// maxDetails bounds a report's details, which travel in workflow history.
const maxDetails = 100

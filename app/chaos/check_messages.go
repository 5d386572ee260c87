package chaos

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// messages is what the callers were sent: the store's outbox, and what
// the fake Twilio and the SMTP sink took (each text or e-mail by the
// reference it quotes).
type messages struct {
	// outbox is each key's messages: kind to status.
	outbox map[string]map[booking.MessageKind]booking.MessageStatus
	// received are the references quoted, one per message taken, with
	// the agency whose account took it; copies counts the takes of a
	// message the fake had already (same number and text, or same
	// Message-ID).
	received               []quoted
	texts, mails           int
	textCopies, mailCopies int
	// trail is each key's events in order, and whether a contact rests
	// with its booking: what a violation quotes, to say how it came about.
	trail map[string]string
	// stopped is when each key's caller texted STOP, as their agency's
	// Twilio account took it.
	stopped map[string]time.Time
	// answers counts the answers to replies not understood, by agency
	// and number.
	answers map[string]int
	// noted are the keys whose pending answer the store noted (it then
	// sends the booking.settled webhook): the note is best effort, and a
	// caller it was lost for is not known to the store to have been told
	// pending.
	noted map[string]bool
}

func (ch *checker) readMessages(ctx context.Context, pool *pgxpool.Pool, c *cluster) error {
	m := messages{outbox: map[string]map[booking.MessageKind]booking.MessageStatus{}, answers: map[string]int{}, noted: map[string]bool{}}
	settled, err := pool.Query(ctx, "SELECT DISTINCT payload->>'request_key' FROM webhook_delivery WHERE event_type = 'booking.settled'")
	if err != nil {
		return fmt.Errorf("read settled webhooks: %w", err)
	}
	keys, err := pgx.CollectRows(settled, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("read settled webhooks: %w", err)
	}
	for _, k := range keys {
		m.noted[k] = true
	}
	rows, err := pool.Query(ctx, "SELECT request_key, kind, status FROM caller_message")
	if err != nil {
		return fmt.Errorf("read caller messages: %w", err)
	}
	for rows.Next() {
		var key string
		var kind booking.MessageKind
		var st booking.MessageStatus
		if err := rows.Scan(&key, &kind, &st); err != nil {
			return fmt.Errorf("read caller messages: %w", err)
		}
		if m.outbox[key] == nil {
			m.outbox[key] = map[booking.MessageKind]booking.MessageStatus{}
		}
		m.outbox[key][kind] = st
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read caller messages: %w", err)
	}
	seen := map[string]bool{}
	for _, a := range c.agencies {
		f := c.accountsOf(a)
		take := func(id, text string, copies *int) {
			if seen[id] {
				*copies++
			}
			seen[id] = true
			m.received = append(m.received, quoted{account: a, ref: reference.FindString(text)})
		}
		for _, t := range f.sms.Sent() {
			m.texts++
			if strings.Contains(t.Body, "this number reads only C") { // the API's answer to a reply, in TwiML
				m.answers[a+" "+t.To]++
				continue
			}
			take(t.To+"\x00"+t.Body, t.Body, &m.textCopies)
		}
		for _, e := range f.mail.Received() {
			m.mails++
			text, _ := e.Part("text/plain")
			take(e.MessageID, text.Body, &m.mailCopies)
		}
	}
	if m.trail, err = trails(ctx, pool); err != nil {
		return err
	}
	m.stopped = map[string]time.Time{}
	for key, b := range ch.bookings {
		if at, ok := c.accountsOf(b.owner().ID).sms.StoppedAt(phoneFor(ch.origin(key))); ok {
			m.stopped[key] = at
		}
	}
	for _, call := range ch.calls { // and of the keys answered pending, which the store may hold none of
		if r := call.Receipt; r != nil && r.Status == receipt.StatusPending {
			if at, ok := c.accountsOf(cmp.Or(call.Agency, agency.Default.ID)).sms.StoppedAt(phoneFor(ch.pendingOrigin(call))); ok {
				m.stopped[r.RequestKey] = at
			}
		}
	}
	ch.messages = m
	return nil
}

// trails reads every key's events in order, and whether its booking has
// a contact.
func trails(ctx context.Context, pool *pgxpool.Pool) (map[string]string, error) {
	rows, err := pool.Query(ctx, `SELECT e.request_key, string_agg(e.kind, ' ' ORDER BY e.event_id),
    EXISTS (SELECT 1 FROM booking b JOIN booking_contact c USING (booking_id) WHERE b.request_key = e.request_key)
FROM booking_event e GROUP BY e.request_key`)
	if err != nil {
		return nil, fmt.Errorf("read event trails: %w", err)
	}
	out := map[string]string{}
	for rows.Next() {
		var key, kinds string
		var contact bool
		if err := rows.Scan(&key, &kinds, &contact); err != nil {
			return nil, fmt.Errorf("read event trails: %w", err)
		}
		out[key] = fmt.Sprintf("events: %s; contact stored: %t", kinds, contact)
	}
	return out, rows.Err()
}

// calledAs lists key's calls in the history, in order: op, outcome and
// the receipt's status.
func (ch *checker) calledAs(key string) string {
	var out []string
	for _, c := range ch.calls {
		if c.Key != key && c.NewKey != key {
			continue
		}
		st := "-"
		if c.Receipt != nil {
			st = string(c.Receipt.Status)
		}
		out = append(out, fmt.Sprintf("%s %s@%s %s/%d/%s", c.Op, c.Key, c.Start.Format("15:04:05.000"), c.Outcome, c.HTTP, st))
	}
	return strings.Join(out, ", ")
}

// quoted is a reference a message quotes, and the agency whose account
// sent it.
type quoted struct{ account, ref string }

var reference = regexp.MustCompile(`BS-[A-Z2-7]{4}-[A-Z2-7]{4}`)

// origin is the first booking of key's moves: its caller's consent is
// that booking's, carried over by every move.
func (ch *checker) origin(key string) string {
	for range len(ch.bookings) {
		b, ok := ch.bookings[key]
		if !ok || b.replaces == "" {
			return key
		}
		key = b.replaces
	}
	return key
}

// callersTold: a caller who agreed to a channel was sent the message of
// their booking's last change: confirmed (or moved) for a live booking,
// cancelled for one cancelled.
func (ch *checker) callersTold() []string {
	var bad []string
	for key, b := range ch.bookings {
		if _, stopped := ch.messages.stopped[key]; stopped || channelFor(ch.origin(key)) == booking.ChannelNone {
			continue // a caller who texted STOP is told nothing more: stoppedStaysStopped
		}
		box := ch.messages.outbox[key]
		switch b.status {
		case string(booking.StatusConfirmed):
			if box[booking.MessageConfirmed] != booking.MessageSent && box[booking.MessageRescheduled] != booking.MessageSent {
				bad = append(bad, fmt.Sprintf("%s is confirmed and its caller was not told (%v; %s; calls: %s)", key, box, ch.messages.trail[key], ch.calledAs(key)))
			}
		case string(booking.StatusCancelled):
			if b.committed && box[booking.MessageCancelled] != booking.MessageSent {
				bad = append(bad, fmt.Sprintf("%s is cancelled and its caller was not told (%v; %s; calls: %s)", key, box, ch.messages.trail[key], ch.calledAs(key)))
			}
		}
	}
	return bad
}

// messagedOnlyIfBooked: every text and e-mail quotes the reference of a
// booking the store confirmed at some point, or of one it refused after
// a pending answer, which the message says was not booked (it holds it committed, or
// answered it confirmed: a restored store may have lost it since), and
// went through the account of that booking's agency.
func (ch *checker) messagedOnlyIfBooked() []string {
	booked := map[string]string{} // reference to its agency
	for key, b := range ch.bookings {
		if b.committed {
			booked[receipt.Reference(key)] = b.owner().ID
		}
	}
	for _, c := range ch.calls {
		if r := c.Receipt; r != nil && (r.Status == receipt.StatusConfirmed || r.Status == receipt.StatusCancelled) {
			booked[receipt.Reference(r.RequestKey)] = cmp.Or(c.Agency, agency.Default.ID)
		}
	}
	// A booking refused after a pending answer is told so (not_booked),
	// quoting the reference the caller heard: never one the store holds.
	var bad []string
	notBooked := map[string]bool{}
	for key, box := range ch.messages.outbox {
		if box[booking.MessageNotBooked] == "" {
			continue
		}
		if _, held := ch.bookings[key]; held {
			bad = append(bad, fmt.Sprintf("%s was told not booked, and the store holds it (%s; calls: %s)", key, ch.messages.trail[key], ch.calledAs(key)))
		}
		notBooked[receipt.Reference(key)] = true
	}
	for _, q := range ch.messages.received {
		switch owner, ok := booked[q.ref]; {
		case !ok && notBooked[q.ref]:
		case !ok:
			bad = append(bad, fmt.Sprintf("a message quotes %q, which the store never confirmed", q.ref))
		case owner != q.account:
			bad = append(bad, fmt.Sprintf("%s's account sent a message quoting %q, %s's booking", q.account, q.ref, owner))
		}
	}
	return bad
}

// pendingSettledTold: a consenting caller whose last answer was pending,
// as the store noted it, and whose booking (or move) the store then
// refused, is told so by message, whichever came first, the refusal or the note of the pending
// answer; unless they texted STOP. A caller whose agent sent the call
// again and heard the refusal was told on the call.
func (ch *checker) pendingSettledTold() []string {
	last := map[string]*receipt.Receipt{} // each key's last answer with a receipt, as the history ends them
	for _, c := range ch.calls {
		if r := c.Receipt; r != nil {
			last[r.RequestKey] = r
		}
	}
	var bad []string
	for _, c := range ch.calls {
		r := c.Receipt
		// A hold carries no contact (the caller gives one when they book
		// it): there is no one to write to.
		if r == nil || r.Status != receipt.StatusPending || last[r.RequestKey] != r || c.Op == "hold" || !ch.messages.noted[r.RequestKey] {
			continue
		}
		key := r.RequestKey
		final := ch.final[key]
		if _, held := ch.bookings[key]; held || final == nil || channelFor(ch.pendingOrigin(c)) == booking.ChannelNone {
			continue
		}
		if final.Status != receipt.StatusConflict && final.Status != receipt.StatusRejected {
			continue
		}
		if _, stopped := ch.messages.stopped[key]; stopped {
			continue
		}
		if st := ch.messages.outbox[key][booking.MessageNotBooked]; st != booking.MessageSent {
			bad = append(bad, fmt.Sprintf("%s was answered pending, then refused (%s), and its caller was not told (%q; %s; calls: %s)",
				key, final.Status, st, ch.messages.trail[key], ch.calledAs(key)))
		}
	}
	return bad
}

// pendingOrigin is the key whose caller a call answered pending writes
// to: its own, or for a move the first booking of the moves.
func (ch *checker) pendingOrigin(c Call) string {
	if c.NewKey != "" {
		return ch.origin(c.Key)
	}
	return c.Receipt.RequestKey
}

// answeredOnce: a reply not understood is answered at most once a day
// per number (a run is shorter than a day), however often it comes.
func (ch *checker) answeredOnce() []string {
	var bad []string
	for number, n := range ch.messages.answers {
		if n > 1 {
			bad = append(bad, fmt.Sprintf("%s was answered %d times in a day", number, n))
		}
	}
	return bad
}

// stoppedStaysStopped: a caller who texted STOP is sent nothing after
// it (their agency's fake Twilio, as Twilio, refuses the number), and
// each text of theirs tried after it ends refused, never undeliverable:
// Twilio's 21610 is their STOP, whether or not its webhook reached us.
func (ch *checker) stoppedStaysStopped() []string {
	var bad []string
	for key := range ch.messages.stopped {
		for kind, st := range ch.messages.outbox[key] {
			if st == booking.MessageUndeliverable {
				bad = append(bad, fmt.Sprintf("%s's %s text ended undeliverable after its caller's STOP, not refused", key, kind))
			}
		}
	}
	return bad
}

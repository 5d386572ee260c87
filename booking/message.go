package booking

import (
	"net/mail"
	"regexp"
	"strings"
	"time"
)

// Channel is how a caller agreed to be written to about their booking.
type Channel string

// The channels. None (the zero value) sends nothing.
const (
	ChannelNone  Channel = ""
	ChannelSMS   Channel = "sms"
	ChannelEmail Channel = "email"
)

// ParseChannel reads a channel as a caller's consent names it: "none" and
// "" are the same, no consent.
func ParseChannel(s string) (Channel, error) {
	switch Channel(s) {
	case ChannelNone, "none":
		return ChannelNone, nil
	case ChannelSMS, ChannelEmail:
		return Channel(s), nil
	}
	return "", Rejectf(CodeInvalidContact, "notify %q: say sms, email or none", s)
}

// e164 is a phone number as Twilio takes it: +, then up to 15 digits.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// ValidateChannel checks that c can be written to on its channel, and
// found again in the CRM where it is kept on file.
func (c Contact) ValidateChannel() error {
	switch {
	case c.Notify == ChannelSMS && !e164.MatchString(c.Phone):
		return Rejectf(CodeInvalidContact, "notify sms needs the phone in E.164 form (+33612345678)")
	case c.Email != "" && !validEmail(c.Email):
		return Rejectf(CodeInvalidContact, "email must be one plain address, like name@example.com")
	case c.Notify == ChannelEmail && c.Email == "":
		return Rejectf(CodeInvalidContact, "notify email needs the caller's email")
	case c.KeepOnFile && c.Phone == "" && c.Email == "":
		return Rejectf(CodeInvalidContact, "keep_on_file needs the caller's phone or email, to find them in the agency's CRM")
	}
	return nil
}

// validEmail is one bare address (no display name, no list) of at most
// 254 octets (RFC 5321's path limit), with a dot in its domain.
func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	at := strings.LastIndexByte(s, '@')
	return err == nil && a.Name == "" && a.Address == s && len(s) <= 254 && at > 0 && strings.Contains(s[at:], ".")
}

// MessageKind is what a message to the caller tells them.
type MessageKind string

// The messages a booking's decisions send.
const (
	MessageConfirmed   MessageKind = "confirmed"
	MessageRescheduled MessageKind = "rescheduled"
	MessageCancelled   MessageKind = "cancelled"
	MessageReminder    MessageKind = "reminder"
	// MessageCode carries a one-time code the caller asked for in a call,
	// to the number the booking was made with: always a text, sent
	// whatever the caller agreed to about the others, while the code
	// lives.
	MessageCode MessageKind = "code"
	// MessageReassigned words a rescheduled message whose move changed
	// only the agent (a reassignment): the caller's time stands. It is
	// never queued itself; one change is one message.
	MessageReassigned MessageKind = "reassigned"
	// MessageNotBooked tells a caller who was told their booking was
	// pending that the store refused it after all (a conflict, a refusal,
	// a choice lapsed), with other free times; MessageMoveNotBooked words
	// it for a move, whose old time stands. Nothing else refused is
	// messaged: the call said so.
	MessageNotBooked     MessageKind = "not_booked"
	MessageMoveNotBooked MessageKind = "move_not_booked"
)

// Message is one message due to a caller: one per booking and kind (the
// store's outbox, migration 026), sent after the store decided.
type Message struct {
	ID         int64
	RequestKey string
	Kind       MessageKind
	CreatedAt  time.Time
	// UnlockID is a code message's code (MessageCode), by which the sender
	// derives its text.
	UnlockID int64
	Booking  Booking `db:"-"`
	// Thread is the request key of the first booking of the viewing's
	// moves, and Moves how many moves led to this one: the caller's
	// calendar invitation keeps one UID across them and a sequence that
	// grows.
	Thread string `db:"-"`
	Moves  int    `db:"-"`
}

// JustAsked is how long after a change its message counts as one the
// caller has just asked for (QuietHoursApply).
const JustAsked = 10 * time.Minute

// QuietHoursApply reports whether a message of kind k, made at made,
// waits out the quiet hours when it goes at now. What the caller has
// just asked for goes at once, whatever the hour: a confirmation, a move
// or a cancellation (or the refusal of one they were told was pending)
// made in the last JustAsked (on their call, or by
// staff just now, which they must hear of before the morning's viewing),
// and a one-time code, which they wait for on the line. What they did not
// just trigger waits: a reminder, a reassignment (their time stands), and
// a message late (queued by reconciliation, or retried past JustAsked).
func (k MessageKind) QuietHoursApply(made, now time.Time) bool {
	switch k {
	case MessageCode:
		return false
	case MessageConfirmed, MessageRescheduled, MessageCancelled, MessageNotBooked, MessageMoveNotBooked:
		return now.Sub(made) > JustAsked
	}
	return true
}

// Invites reports whether an e-mail of kind k carries the viewing as a
// calendar invitation: each change of it does, and a reminder (the
// calendar has it already) and a refusal (there is nothing to add) do not.
func (k MessageKind) Invites() bool {
	switch k {
	case MessageReminder, MessageNotBooked, MessageMoveNotBooked, MessageCode:
		return false
	}
	return true
}

// MessageStatus is where a caller message stands.
type MessageStatus string

// A message is due until it ends one of the other ways.
const (
	MessageDue           MessageStatus = "due"
	MessageSent          MessageStatus = "sent"
	MessageNotConsented  MessageStatus = "not_consented"
	MessageUndeliverable MessageStatus = "undeliverable"
	// MessageStale: the booking changed before its message went (a
	// confirmation of a booking cancelled since); the later one tells.
	MessageStale MessageStatus = "stale"
	// MessageRefused: a text over a cap, or to a country the agency does
	// not text (activities.TextLimits).
	MessageRefused MessageStatus = "refused"
)

// MessageNotice is how one message to a booking's caller ended, as the
// sender tells the booking's saga.
type MessageNotice struct {
	Kind   MessageKind
	Status MessageStatus
}

// MessageRecord is one message as the operator's view shows it.
type MessageRecord struct {
	Kind       MessageKind   `json:"kind"`
	Status     MessageStatus `json:"status"`
	Channel    Channel       `json:"channel,omitempty"`
	ProviderID string        `json:"provider_id,omitempty"`
	Attempts   int           `json:"attempts"`
	LastError  string        `json:"last_error,omitempty"`
}

// QuietHours is when no text message goes out, in the property's zone:
// from From to To after local midnight (21:00 to 08:00 by default, the
// span crossing midnight when From is the later). Equal bounds are none.
type QuietHours struct {
	From, To time.Duration
}

// Until reports whether now falls in the quiet hours at loc, and if so
// the instant they end: the next To, local time.
func (q QuietHours) Until(now time.Time, loc *time.Location) (time.Time, bool) {
	if q.From == q.To {
		return time.Time{}, false
	}
	local := now.In(loc)
	midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	since := time.Duration(local.Hour())*time.Hour + time.Duration(local.Minute())*time.Minute + time.Duration(local.Second())*time.Second
	// On the wall clock, not midnight plus a duration: a DST change in
	// the night would move the edge by an hour.
	end := func(days int) time.Time {
		d := midnight.AddDate(0, 0, days)
		return time.Date(d.Year(), d.Month(), d.Day(), int(q.To/time.Hour), int(q.To%time.Hour/time.Minute), 0, 0, loc)
	}
	switch {
	case q.From > q.To && since >= q.From:
		return end(1), true
	case q.From > q.To && since < q.To, q.From < q.To && since >= q.From && since < q.To:
		return end(0), true
	}
	return time.Time{}, false
}

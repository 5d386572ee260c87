package speech

import (
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// Message is the text a caller reads about their booking after the call:
// what happened (kind), the property's name in their language, the local
// time with its zone, the reference, and how to change it. Never an id.
func (s Speaker) Message(kind booking.MessageKind, b booking.Booking) string {
	return s.render("msg_"+string(kind), s.messageArgs(b))
}

// Text is the message as a text: a reminder asks the caller to reply C
// to confirm they are coming (api/texts records the reply).
func (s Speaker) Text(kind booking.MessageKind, b booking.Booking) string {
	msg := s.Message(kind, b)
	if kind == booking.MessageReminder {
		msg += " " + s.render("text_reply_confirm", nil)
	}
	return msg
}

// Code is the text of a one-time code a caller asked for in a call: the
// code, how long it lasts, and that the agency never asks for it except
// on the line they called.
func (s Speaker) Code(code string) string {
	return s.render("msg_code", map[string]string{"code": code})
}

// Subject is an e-mail's subject line for the message.
func (s Speaker) Subject(kind booking.MessageKind, b booking.Booking) string {
	return s.render("subject_"+string(kind), s.messageArgs(b))
}

// InviteSummary is the title of the viewing in the caller's calendar.
func (s Speaker) InviteSummary(b booking.Booking) string {
	return s.render("invite_summary", s.messageArgs(b))
}

// MeetingTitle is the viewing as the agency's staff see it in their CRM:
// the property and the agent by name.
func (s Speaker) MeetingTitle(propertyID, agentID string) string {
	return s.render("crm_title", map[string]string{"property": s.name(propertyID, "the_property"), "agent": s.name(agentID, "the_agent")})
}

func (s Speaker) messageArgs(b booking.Booking) map[string]string {
	return map[string]string{"property": s.name(b.Intent.PropertyID, "the_property"), "agent": s.name(b.Intent.AgentID, "the_agent"),
		"when": s.When(b.Intent.StartsAt, b.Intent.TimeZone), "reference": receipt.Reference(b.RequestKey), "place": s.place()}
}

// place is the viewing's address after the property's name, in the
// language's brackets; "" when the agency gave none.
func (s Speaker) place() string {
	switch {
	case s.Address == "":
		return ""
	case s.Lang == Chinese:
		return "（" + s.Address + "）"
	}
	return " (" + s.Address + ")"
}

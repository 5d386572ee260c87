package speech

import (
	"strings"

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

// UnknownReply answers a caller's text the service did not understand,
// about b: the words it reads, and how to change the booking (the link
// to their page, else the number), with the agency's number beside the
// link.
func (s Speaker) UnknownReply(b booking.Booking) string {
	v := s.messageArgs(b)
	v["call"] = ""
	if s.Link != "" && s.Phone != "" {
		v["call"] = s.render("reply_call", map[string]string{"phone": s.Phone})
	}
	return s.render("text_unknown_reply", v)
}

// Reconfirmed is the agent's note on a booking whose caller replied to
// their reminder that they are coming.
func (s Speaker) Reconfirmed() string { return s.word("reconfirmed") }

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
	v := map[string]string{"property": s.name(b.Intent.PropertyID, "the_property"), "agent": s.name(b.Intent.AgentID, "the_agent"),
		"when": s.When(b.Intent.StartsAt, b.Intent.TimeZone), "reference": receipt.Reference(b.RequestKey), "place": s.place(),
		"sign": "", "with": ""}
	if s.Agency != "" {
		v["sign"] = s.render("sign", map[string]string{"agency": s.Agency})
	}
	if s.Names[b.Intent.AgentID] != "" { // "with the agent" says nothing
		v["with"] = s.render("with", v)
	}
	v["change"], v["rebook"], v["free"] = s.render("change_call", nil), s.render("rebook_call", nil), ""
	if len(s.Free) > 0 {
		times := make([]string, 0, len(s.Free))
		for _, t := range s.Free {
			times = append(times, s.When(t, b.Intent.TimeZone))
		}
		v["free"] = s.render("msg_free", map[string]string{"times": strings.Join(times, s.word("list_sep"))})
	}
	if s.Phone != "" {
		v["change"], v["rebook"] = s.render("change_phone", map[string]string{"phone": s.Phone}), s.render("rebook_phone", map[string]string{"phone": s.Phone})
	}
	if s.Link != "" {
		v["change"] = s.render("change_link", map[string]string{"link": s.Link})
	}
	return v
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

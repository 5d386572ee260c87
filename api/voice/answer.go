package voice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/phone"
	"github.com/bookingsaga/bookingsaga/internal/speech"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// Answer is a tool call's answer: its status (a receipt's, or one of the
// tools' own: selected, offered, found, fact, no_fact, handoff_requested,
// not_done), a code for a refusal or a call not done, the line the agent
// says (with notes for the model after it), and what it speaks of. Each
// platform renders it its own way: one line of text for Retell and Vapi
// (Text), structured content for MCP.
type Answer struct {
	Status string
	Code   string
	// Line is what follows the [status] tag: the words to say, then any
	// "For the tools: …" note.
	Line         string
	Receipt      *receipt.Receipt
	Availability *edge.AvailabilityAnswer
	// RequestKey is the key a choice (select_slot) was given.
	RequestKey string
	// ConversationID is a conversation id the service minted for an MCP
	// call that sent none.
	ConversationID string
	// Question marks a call that did nothing because the caller must
	// choose (a local time the clocks skip or pass twice): a turn of the
	// conversation, not a failure.
	Question bool
}

// statusNotDone is a call that did nothing.
const statusNotDone = "not_done"

// Text is the answer as one line: "[status: code] line", the tag the
// system prompt keys on whatever the language.
func (a Answer) Text() string {
	tag := a.Status
	if a.Code != "" {
		tag += ": " + a.Code
	}
	return "[" + tag + "] " + a.Line
}

// note adds words for the model after the line.
func (a Answer) note(words string) Answer {
	a.Line += " " + words
	return a
}

// Failed reports an answer whose call did nothing and asks nothing of
// the caller: bad arguments, a temporary failure. Platforms with an
// error channel get it there (Vapi's error, MCP's isError).
func (a Answer) Failed() bool { return a.Status == statusNotDone && !a.Question }

// temporaryProblem answers a call that failed for a reason of the
// system's: nothing is known to have been done, and the same call again
// is safe.
var temporaryProblem = notDone(booking.CodeUnavailable, "a temporary problem. Try the same call again in a moment")

// notDone is a call that did nothing, worded for the model, never as a
// success.
func notDone(code booking.Code, msg string) Answer {
	return Answer{Status: statusNotDone, Code: string(code), Line: "NOT done: " + strings.TrimSuffix(msg, ".") + "."}
}

// platformCall is what a platform says of the phone call a tool call is
// part of: its id, and the caller's number (caller ID) where it tells
// one. Neither ever comes from the model's arguments.
type platformCall struct {
	id     string
	caller string
}

// callOf is the call named id, its caller ID read as a number: one that
// can't be read as an international number counts as none.
func callOf(id, callerNumber string) platformCall {
	number, _ := phone.E164(callerNumber, "")
	return platformCall{id: id, caller: number}
}

// CallerNumberHeader is the header that carries caller ID where the
// platform's own payload does not (MCP; Retell's args-only functions),
// honoured only on the routes the deployment declares platform-fronted
// (Config.CallerIDHeader): the platform, not the agent, sets it
// (docs/connect.md).
const CallerNumberHeader = "X-Caller-Number"

// call runs one tool call for the conversation a platform named, scoped
// by the key the call came in under (edge.Conversation).
func (t *Tools) call(ctx context.Context, pc platformCall, name string, raw json.RawMessage) Answer {
	done, refused := t.admit(ctx, name, pc.id, raw)
	if refused != nil {
		return *refused
	}
	defer done()
	args, bad := readToolArgs(raw)
	if bad != nil {
		return *bad
	}
	conv, e := edge.Conversation(ctx, pc.id)
	if e != nil {
		return notDone(booking.Code(e.Code), e.Message)
	}
	args.callerNumber = pc.caller
	return t.callWith(ctx, conv, name, args)
}

// readToolArgs reads a call's arguments: an object, or (as some
// platforms send them) a JSON string holding one.
func readToolArgs(raw json.RawMessage) (toolArgs, *Answer) {
	var args toolArgs
	var str string
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) && json.Unmarshal(raw, &str) == nil {
		raw = json.RawMessage(str)
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			bad := notDone(booking.CodeBadJSON, "could not read the arguments: "+edge.JSONProblem(err))
			return args, &bad
		}
	}
	return args, nil
}

// callWith runs one tool call of a conversation (scoped already) with its
// arguments read, and answers its error as the edge's one classification
// reads it. A panic is answered as a call not done: MCP's SDK runs a tool in a goroutine of its own, where
// an unrecovered panic would stop the process. Whatever the call may have
// sent is idempotent by its key, so trying again is safe.
func (t *Tools) callWith(ctx context.Context, conversationID, name string, args toolArgs) (out Answer) {
	defer func() {
		if p := recover(); p != nil {
			edge.Logger(ctx).Error("tool call panicked", zap.String("tool", name), zap.Any("panic", p), zap.Stack("stack"))
			out = temporaryProblem
		}
	}()
	lang, err := edge.Language(args.Language, t.set.Language)
	if err != nil {
		return notDone(booking.CodeMissingField, err.Error())
	}
	args.lang = lang
	ans, err := t.run(ctx, conversationID, name, args)
	if err == nil {
		return ans
	}
	var e *edge.Error
	var held *receipt.HeldError
	switch {
	case errors.As(err, &held):
		return t.spoken(ctx, lang, held.Earlier).note("An earlier booking in this call is not settled: check it with booking_status (request_key " +
			held.Earlier.RequestKey + ") before booking anything else.")
	case errors.As(err, &e) && len(e.Candidates) == 2:
		// A local time the clocks skip or pass twice: ask, never guess.
		return Answer{Status: statusNotDone, Code: e.Code, Question: true, Line: speech.Speaker{Lang: lang}.LocalTimeQuestion(e.Code == string(booking.CodeAmbiguousTime),
			args.LocalStart[:min(len(args.LocalStart), len(localtime.Layout))], e.Candidates[0], e.Candidates[1], args.TimeZone)}
	}
	e, technical := edge.Classify(err)
	switch {
	case technical:
		edge.Logger(ctx).Error("tool call failed", zap.String("tool", name), zap.Error(err))
		return temporaryProblem
	case e.Code == string(booking.CodeNotFound):
		return notDone(booking.CodeNotFound, "there is no booking under this request_key")
	}
	return notDone(booking.Code(e.Code), e.Message)
}

// spoken is the answer for r: its status, and a refusal's or conflict's
// code, then the line to speak, with the receipt it speaks of.
func (t *Tools) spoken(ctx context.Context, lang speech.Lang, r receipt.Receipt) Answer {
	r.Spoken = t.set.Names.Speaker(ctx, lang, r.PropertyRef, r.AgentRef).Receipt(r)
	out := Answer{Status: string(r.Status), Line: r.Spoken, Receipt: &r}
	if r.Reason != nil && r.Reason.Code != "" && (r.Status == receipt.StatusRejected || r.Status == receipt.StatusConflict) {
		out.Code = r.Reason.Code
	}
	return out
}

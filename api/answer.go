package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/speech"
	"github.com/bookingsaga/bookingsaga/receipt"
	"github.com/bookingsaga/bookingsaga/sagaclient"
)

// toolAnswer is a tool call's answer: the one line every platform gets
// (its [status] tag, then what to say), and what it speaks of, for the
// platforms that take structured results (MCP).
type toolAnswer struct {
	Text         string
	Receipt      *receipt.Receipt
	Availability *AvailabilityAnswer
	// RequestKey is the key a choice (select_slot) was given.
	RequestKey string
	// Question marks a call that did nothing because the caller must
	// choose (a local time the clocks skip or pass twice): a turn of the
	// conversation, not a failure.
	Question bool
}

// notDoneAnswer is a call that did nothing; Retryable says the same call
// may simply be sent again (a technical failure).
func notDoneAnswer(code, msg string) toolAnswer { return toolAnswer{Text: notDone(code, msg)} }

// Failed reports an answer whose call did nothing and asks nothing of
// the caller: bad arguments, a temporary failure. Platforms with an
// error channel get it there (Vapi's error, MCP's isError).
func (t toolAnswer) Failed() bool { return strings.HasPrefix(t.Text, "[not_done") && !t.Question }

// tool runs one tool call for a conversation.
func (s *Server) tool(ctx context.Context, conversationID, name string, raw json.RawMessage) toolAnswer {
	args, bad := readToolArgs(raw)
	if bad != nil {
		return *bad
	}
	return s.toolWith(ctx, conversationID, name, args)
}

// readToolArgs reads a call's arguments: an object, or (as some
// platforms send them) a JSON string holding one.
func readToolArgs(raw json.RawMessage) (toolArgs, *toolAnswer) {
	var args toolArgs
	var str string
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) && json.Unmarshal(raw, &str) == nil {
		raw = json.RawMessage(str)
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			bad := notDoneAnswer(string(codeBadJSON), "could not read the arguments: "+jsonProblem(err))
			return args, &bad
		}
	}
	return args, nil
}

// toolWith runs one tool call with its arguments read.
func (s *Server) toolWith(ctx context.Context, conversationID, name string, args toolArgs) toolAnswer {
	lang, err := s.language(args.Language)
	if err != nil {
		return notDoneAnswer(string(booking.CodeMissingField), err.Error())
	}
	args.lang = lang
	out, err := s.runTool(ctx, conversationID, name, args)
	var e *Error
	if errors.As(err, &e) && len(e.Candidates) == 2 {
		// A local time the clocks skip or pass twice: ask, never guess.
		return toolAnswer{Text: "[not_done: " + e.Code + "] " + speech.Speaker{Lang: lang}.LocalTimeQuestion(e.Code == string(codeAmbiguousTime),
			args.LocalStart[:min(len(args.LocalStart), len(localtime.Layout))], e.Candidates[0], e.Candidates[1], args.TimeZone), Question: true}
	}
	if errors.Is(err, sagaclient.ErrOverloaded) {
		s.shed()
		return notDoneAnswer(string(codeUnavailable), "bookingsaga is at capacity, so nothing was sent and nothing is booked. Try the same call again in a moment")
	}
	if err != nil {
		return toolAnswer{Text: toolError(err)}
	}
	return out
}

package booking

import (
	"errors"
	"time"
)

// A caller's link opens a page of their own (api/callerpage): it shows
// their booking, cancels it, or moves it to one of the offered free times.

// Link is what a caller's link opens: the booking it was made for and
// whatever its moves made of it since.
type Link struct {
	// RequestKey is the key of the newest booking of the moves: the one
	// the page shows and acts on.
	RequestKey string
	ExpiresAt  time.Time
}

// LinkTokenBytes is a link's token's length before encoding: 128 bits,
// 22 characters of base64url, unguessable and short enough for a text.
const LinkTokenBytes = 16

// The ways a link opens nothing. Each is a page of its own to the caller,
// and none says whether another booking exists.
var (
	ErrLinkUnknown = errors.New("no such link")
	ErrLinkExpired = errors.New("the link expired with its viewing")
	ErrLinkRevoked = errors.New("the link was revoked")
)

// ReplyAnswer is what a caller's text the service did not understand is
// answered about: their booking still to come, their language, and the
// token of the link to their page ("" when it has none).
type ReplyAnswer struct {
	Booking Booking
	Lang    string
	Token   string
}

// ReplyAnswerEvery is how often a number is answered a reply not
// understood, at most: a caller texting on gets one answer a day.
const ReplyAnswerEvery = 24 * time.Hour

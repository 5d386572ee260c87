package mailtest

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"time"
)

// Message is one message the sink accepted, as it lists it: its envelope,
// its headers decoded, and its leaf parts with their transfer encoding
// undone.
type Message struct {
	From      string    `json:"from"`
	To        []string  `json:"to"`
	MessageID string    `json:"message_id"`
	Subject   string    `json:"subject"`
	Parts     []Part    `json:"parts"`
	At        time.Time `json:"received_at"`
}

// Part is one leaf of the MIME tree.
type Part struct {
	// Type is the media type with its parameters, as sent.
	Type     string `json:"type"`
	Filename string `json:"filename,omitempty"`
	Body     string `json:"body"`
}

// Part returns the first part of media type mt ("text/calendar"), if any.
func (m Message) Part(mt string) (Part, bool) {
	for _, p := range m.Parts {
		if t, _, _ := mime.ParseMediaType(p.Type); t == mt {
			return p, true
		}
	}
	return Part{}, false
}

func decode(from string, to []string, raw []byte) (Message, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Message{}, err
	}
	var dec mime.WordDecoder
	subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		return Message{}, fmt.Errorf("subject: %w", err)
	}
	out := Message{From: from, To: to, MessageID: strings.Trim(msg.Header.Get("Message-ID"), "<>"), Subject: subject, At: time.Now().UTC()}
	out.Parts, err = leaves(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), "", msg.Body)
	return out, err
}

// leaves walks a MIME entity down to its leaf parts.
func leaves(contentType, encoding, disposition string, body io.Reader) ([]Part, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, fmt.Errorf("content type %q: %w", contentType, err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		var out []Part
		r := multipart.NewReader(body, params["boundary"])
		for {
			p, err := r.NextRawPart()
			if err == io.EOF {
				return out, nil
			}
			if err != nil {
				return nil, err
			}
			sub, err := leaves(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p.Header.Get("Content-Disposition"), p)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
	}
	switch strings.ToLower(encoding) {
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body)
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	p := Part{Type: contentType, Body: string(b)}
	if _, dp, err := mime.ParseMediaType(disposition); err == nil {
		p.Filename = dp["filename"]
	}
	return []Part{p}, nil
}

package callerpage

import (
	"context"
	"html/template"
	"net/http"
	"time"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/speech"
)

// view is what the page shows: every line worded already, in the
// caller's language; the template only lays it out.
type view struct {
	Lang, Title, Notice, Status, Reference, Call string
	// Move and Cancel are the forms the booking allows; nil shows none.
	Move   *moveForm
	Cancel *form
	// Langs switch the page's language.
	Langs []langLink
}

// form is what every form carries: the action, and the value that ties
// it to this link and this page (forms.go).
type form struct {
	Heading, Button, Nonce, Check string
}

type moveForm struct {
	form
	Slots   []slotChoice
	NoSlots string
}

type slotChoice struct {
	Value, Label string
}

type langLink struct {
	Href, Name string
	Current    bool
}

// show is GET: the booking as the store holds it now, and what the
// caller may do with it.
func (p *Page) show(w http.ResponseWriter, r *http.Request) error {
	v, ok, err := p.open(w, r, "view")
	if !ok {
		return err
	}
	return p.render(w, r, v, "view", "shown", "", http.StatusOK)
}

// render writes the page of v's booking with notice (a page line's
// name, or ""), and counts the request as result.
func (p *Page) render(w http.ResponseWriter, r *http.Request, v visit, action, result, notice string, status int) error {
	b, sp := v.booking, v.sp
	out := p.frame(r, sp)
	if notice != "" {
		nb := b
		if v.change != "" {
			nb.RequestKey = v.change
		}
		out.Notice = sp.Page(notice, nb)
	}
	out.Reference = sp.Page("reference", b)
	started := !p.set.Now().Before(b.Intent.StartsAt)
	switch {
	case b.Status == booking.StatusCancelled:
		out.Status = sp.Page("cancelled", b)
	case !b.Status.Live():
		out.Status = sp.Page("gone", b)
	case started:
		out.Status = sp.Page("started", b)
	default:
		out.Status = sp.Page("confirmed", b)
		mv, err := p.moveForm(r.Context(), v)
		if err != nil {
			return err
		}
		out.Move, out.Cancel = mv, p.newForm(v, "cancel")
	}
	p.count(r, action, result)
	return p.write(w, out, status)
}

// notice answers a page with nothing to show but why (an unknown,
// expired or revoked link, too many tries, a form refused).
func (p *Page) notice(w http.ResponseWriter, r *http.Request, v visit, action, why string, status int) error {
	out := p.frame(r, v.sp)
	out.Status = v.sp.PageLine(why)
	p.count(r, action, why)
	return p.write(w, out, status)
}

// frame is what every page carries: the title, how to call, the
// languages.
func (p *Page) frame(r *http.Request, sp speech.Speaker) view {
	out := view{Lang: string(sp.Lang), Title: sp.PageLine("title"), Call: sp.PageLine("call")}
	if sp.Agency != "" {
		out.Title = sp.Agency + " · " + out.Title
	}
	if sp.Phone != "" {
		out.Call = sp.PageLine("call_phone")
	}
	for _, l := range []struct {
		lang speech.Lang
		name string
	}{{speech.English, "English"}, {speech.French, "Français"}, {speech.Chinese, "中文"}} {
		out.Langs = append(out.Langs, langLink{Href: r.URL.Path + "?lang=" + string(l.lang), Name: l.name, Current: l.lang == sp.Lang})
	}
	return out
}

// moveForm offers the free times of the booking's property and agent
// from now to two weeks on, the booking's own left out.
func (p *Page) moveForm(ctx context.Context, v visit) (*moveForm, error) {
	av, err := p.offered(ctx, v.booking)
	if err != nil {
		return nil, err
	}
	f := &moveForm{form: *p.newForm(v, "move")}
	for _, s := range spread(av.Slots, v.booking.Intent.TimeZone) {
		f.Slots = append(f.Slots, slotChoice{Value: s.StartsAt.UTC().Format(time.RFC3339), Label: v.sp.When(s.StartsAt, v.booking.Intent.TimeZone)})
	}
	if len(f.Slots) == 0 {
		f.NoSlots = v.sp.Page("no_slots", v.booking)
	}
	return f, nil
}

// offerWindow bounds the times a page offers; perDay and maxOffered how
// many it shows.
const (
	offerWindow = 14 * 24 * time.Hour
	perDay      = 3
	maxOffered  = 15
)

// spread is what the form shows of the free starts: at most perDay of
// each day (its first, middle and last), at most maxOffered in all, so
// that a caller sees the days ahead and not one day's every half hour.
func spread(slots []booking.Slot, zone string) []booking.Slot {
	loc, err := localtime.LoadZone(zone)
	if err != nil {
		loc = time.UTC
	}
	var out, day []booking.Slot
	flush := func() {
		if len(day) > perDay {
			day = []booking.Slot{day[0], day[len(day)/2], day[len(day)-1]}
		}
		out = append(out, day...)
		day = nil
	}
	for _, s := range slots {
		if len(day) > 0 && s.StartsAt.In(loc).YearDay() != day[0].StartsAt.In(loc).YearDay() {
			flush()
		}
		day = append(day, s)
	}
	flush()
	return out[:min(len(out), maxOffered)]
}

// offered are the free times a move may take: the same property, agent
// (or team) and length, from now to offerWindow on. The form shows some
// (spread); a move may take any, as they are free when it is sent.
func (p *Page) offered(ctx context.Context, b booking.Booking) (booking.Availability, error) {
	in := b.Intent
	now := p.set.Now()
	q := booking.AvailabilityQuery{PropertyID: in.PropertyID, AgentID: in.AgentID, ExtraResources: in.ExtraResources,
		From: now, To: now.Add(offerWindow), Duration: in.EndsAt.Sub(in.StartsAt)}
	av, err := p.set.Catalogue.Availability(ctx, q)
	if err != nil {
		return booking.Availability{}, err
	}
	slots := av.Slots[:0]
	for _, s := range av.Slots {
		if !s.StartsAt.Equal(in.StartsAt) {
			slots = append(slots, s)
		}
	}
	av.Slots = slots
	return av, nil
}

// write sends the page: no caching (it is one person's booking), no
// referrer (the path is the capability), no framing, no script.
func (p *Page) write(w http.ResponseWriter, out view, status int) error {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	w.WriteHeader(status)
	return pageTemplate.Execute(w, out)
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="{{.Lang}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{.Title}}</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f6f4;color:#222}
main{max-width:34rem;margin:0 auto;padding:1.5rem}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem}
.notice{background:#fff4d6;border-left:4px solid #e0a800;padding:.75rem}
.status{font-size:1.15rem}
label{display:block;padding:.35rem 0}
button{font:inherit;padding:.5rem 1rem;margin-top:.5rem;cursor:pointer}
nav a{margin-right:1rem}
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
{{with .Notice}}<p class="notice" role="status">{{.}}</p>{{end}}
<p class="status" id="status">{{.Status}}</p>
{{with .Reference}}<p id="reference">{{.}}</p>{{end}}
{{with .Move}}<form method="post" id="move">
<h2>{{.Heading}}</h2>
{{range .Slots}}<label><input type="radio" name="slot" value="{{.Value}}" required> {{.Label}}</label>
{{end}}{{with .NoSlots}}<p>{{.}}</p>{{end}}
<input type="hidden" name="action" value="move">
<input type="hidden" name="nonce" value="{{.Nonce}}"><input type="hidden" name="check" value="{{.Check}}">
{{if .Slots}}<button type="submit">{{.Button}}</button>{{end}}
</form>{{end}}
{{with .Cancel}}<form method="post" id="cancel">
<h2>{{.Heading}}</h2>
<input type="hidden" name="action" value="cancel">
<input type="hidden" name="nonce" value="{{.Nonce}}"><input type="hidden" name="check" value="{{.Check}}">
<button type="submit">{{.Button}}</button>
</form>{{end}}
<p>{{.Call}}</p>
<nav>{{range .Langs}}{{if .Current}}<strong>{{.Name}}</strong> {{else}}<a href="{{.Href}}">{{.Name}}</a> {{end}}{{end}}</nav>
</main>
</body>
</html>
`))

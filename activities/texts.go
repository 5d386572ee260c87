package activities

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/phone"
	"github.com/bookingsaga/bookingsaga/internal/store"
)

// TextLimits bound the texts the sender sends. Texts cost the agency
// money per message, more to some destinations: SMS pumping (toll fraud,
// texts driven to premium numbers an attacker is paid for) is the first
// abuse Twilio's own guidance warns about. A text over a cap, or to a
// country the agency does not text, ends 'refused' and is counted.
type TextLimits struct {
	// PerNumberDay is the most texts one number gets in 24 hours.
	PerNumberDay int
	// PerKeyHour is the most texts one API key's calls ask for in an
	// hour: bookings' messages and one-time codes alike.
	PerKeyHour int
	// PerAgencyHour is the most texts one agency's bookings and calls
	// ask for in an hour, all its keys together.
	PerAgencyHour int
	// Countries are the ISO 3166 regions ("FR", "GB") texts may go to;
	// none is the regions of the agency's properties' time zones.
	Countries []string
}

// The caps by default: a caller's booking, move, reminder, cancellation
// and a few codes fit in a day; a key's hour fits a busy agency's line,
// and an agency's hour four such lines.
const (
	DefaultTextsPerNumberDay  = 10
	DefaultTextsPerKeyHour    = 200
	DefaultTextsPerAgencyHour = 800
)

// textTo is the number a text of m goes to: number read as written in
// the property's country, in E.164 (a caller may have said "06 12 34 56
// 78"). refused says why it must not go, or is "" when it may; a text
// that may go is claimed against the caps.
func (a *Activities) textTo(ctx context.Context, m booking.Message, number, by string) (to, refused string, err error) {
	to, ok := phone.E164(number, m.Booking.Intent.TimeZone)
	if !ok {
		return number, "", nil // the provider refuses it as undeliverable
	}
	switch stopped, err := a.Store.TextsStopped(ctx, to, ""); {
	case err != nil:
		return "", "", storeError("texts stopped", m.RequestKey, err)
	case stopped:
		a.textRefusedCount(ctx, "stopped")
		return "", stoppedWhy, nil
	}
	allowed, err := a.textCountries(ctx)
	if err != nil {
		return "", "", err
	}
	if region := phone.Region(to); !slices.Contains(allowed, region) {
		a.textRefusedCount(ctx, "country")
		return "", fmt.Sprintf("texts to region %s are not allowed (allowed: %s)", region, strings.Join(allowed, ", ")), nil
	}
	ok, err = a.Store.ClaimText(ctx, m.ID, to, by, store.TextCaps{
		PerNumberDay: a.Texts.PerNumberDay, PerKeyHour: a.Texts.PerKeyHour, PerAgencyHour: a.Texts.PerAgencyHour})
	switch {
	case err != nil:
		return "", "", storeError("claim text", m.RequestKey, err)
	case !ok:
		a.textRefusedCount(ctx, "cap")
		return "", fmt.Sprintf("over a cap: %d texts to one number a day, %d asked by one key an hour, %d of the agency an hour",
			a.Texts.PerNumberDay, a.Texts.PerKeyHour, a.Texts.PerAgencyHour), nil
	}
	return to, "", nil
}

// textCountries are the regions texts may go to: the configured ones, or
// those of the properties' zones.
func (a *Activities) textCountries(ctx context.Context) ([]string, error) {
	if len(a.Texts.Countries) > 0 {
		return a.Texts.Countries, nil
	}
	zones, err := a.Store.PropertyZones(ctx)
	if err != nil {
		return nil, storeError("property zones", "", err)
	}
	var out []string
	for _, z := range zones {
		if r := phone.ZoneRegion(z); r != "ZZ" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (a *Activities) textRefusedCount(ctx context.Context, reason string) {
	a.metrics(ctx).Tagged(map[string]string{"reason": reason}).Counter("texts_refused_total").Inc(1)
}

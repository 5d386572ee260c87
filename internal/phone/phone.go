// Package phone reads phone numbers as numbers: compares them, writes them
// in E.164, and names their country. It stands apart from booking, the
// contract clients link, so that libphonenumber's data goes only into the
// processes that read numbers (the API's find_booking, the worker's
// texts).
package phone

import (
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/nyaruka/phonenumbers"
)

// Same reports whether a and b are one phone number, each read as a
// person in the property's country writes it: in Paris "+33 6 12 34 56
// 78", "06 12 34 56 78" and "0033612345678" are one number, and the same
// digits under another country code are not. Numbers are compared in
// E.164 by libphonenumber's rules (nyaruka/phonenumbers), not by a run of
// trailing digits; one that can't be read as a number matches nothing.
func Same(a, b, zone string) bool {
	x, ok := E164(a, zone)
	y, ok2 := E164(b, zone)
	return ok && ok2 && x == y
}

// E164 is number in E.164 (+33612345678), read as a person in zone's
// country writes it; a number written with its country code (as voice
// platforms give caller ID) reads the same whatever the zone, "" among
// them. ok is false for what can't be read as a number.
func E164(number, zone string) (e164 string, ok bool) {
	n, err := phonenumbers.Parse(number, phoneRegion(zone))
	if err != nil {
		return "", false
	}
	e := phonenumbers.Format(n, phonenumbers.E164)
	return e, len(e) >= 8
}

// phoneRegion is the region whose dialling plan numbers written in zone
// (an IANA name) follow: the main region of the calling code whose
// numbers libphonenumber places in that zone ("Europe/Paris" is +33's,
// FR; "America/Vancouver" is +1's, whose plan the whole NANP shares).
// An unknown zone is "ZZ": only numbers written with their country code
// can be read then.
func phoneRegion(zone string) string {
	if r, ok := zoneRegions()[zone]; ok {
		return r
	}
	return "ZZ"
}

// zoneRegions maps each zone to its calling code's main region, built
// once from the library's own data; the lowest calling code wins a zone
// two codes share.
var zoneRegions = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	for _, cc := range slices.Sorted(maps.Keys(phonenumbers.GetSupportedCallingCodes())) {
		zones, err := phonenumbers.GetTimezonesForPrefix("+" + strconv.Itoa(cc))
		if err != nil {
			continue
		}
		region := phonenumbers.GetRegionCodeForCountryCode(cc)
		for _, z := range zones {
			if _, taken := out[z]; !taken {
				out[z] = region
			}
		}
	}
	return out
})

// Region is the ISO 3166 region of a number in E.164 ("FR" for
// +33612345678), or "" for one that can't be read.
func Region(e164 string) string {
	n, err := phonenumbers.Parse(e164, "ZZ")
	if err != nil {
		return ""
	}
	return phonenumbers.GetRegionCodeForNumber(n)
}

// ZoneRegion is the region whose numbers a person in zone writes (the
// main region of its calling code), or "ZZ" for a zone it does not know.
func ZoneRegion(zone string) string { return phoneRegion(zone) }

// KnownRegion reports whether region is an ISO 3166 region with a
// dialling plan ("FR", "GB").
func KnownRegion(region string) bool { return phonenumbers.GetCountryCodeForRegion(region) != 0 }

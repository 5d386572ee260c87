package booking

import "unicode/utf8"

// Profile is the agency as its callers see it: the name their texts and
// e-mails are signed with and the number they can call back, set by its
// admin (PUT /v1/profile). Either may be empty: a message then leaves it
// out.
type Profile struct {
	Name  string
	Phone string
}

// maxProfileName keeps a name that signs every text short.
const maxProfileName = 60

// Validate refuses a name too long for a text, or a number a caller could
// not dial from anywhere (E.164).
func (p Profile) Validate() error {
	switch {
	case utf8.RuneCountInString(p.Name) > maxProfileName:
		return Rejectf(CodeInvalidAgency, "name is at most %d characters, got %d", maxProfileName, utf8.RuneCountInString(p.Name))
	case p.Phone != "" && !e164.MatchString(p.Phone):
		return Rejectf(CodeInvalidAgency, "callback_phone must be in E.164 form (+33612345678)")
	}
	return nil
}

package speech

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/receipt"
)

var (
	start   = time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC) // 10:00 in Paris
	names   = map[string]string{"paris-11": "the Marais flat", "agent-00": "Claire"}
	leakage = []*regexp.Regexp{
		regexp.MustCompile(`[+-]\d{2}:\d{2}`),                                  // a UTC offset
		regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-`), // a UUID
		regexp.MustCompile(`paris-11|agent-00|Europe/|UTC|:\d{2}Z\b`),          // ids, zones, an instant in Z
		regexp.MustCompile(`\d{4}-\d{2}-\d{2}`),                                // an ISO date
	}
)

// every receipt a line is made for, one per status and variant.
func every(key string) []receipt.Receipt {
	alt := start.Add(2 * time.Hour)
	base := receipt.Receipt{RequestKey: key, PropertyRef: "paris-11", AgentRef: "agent-00", StartsAt: &start,
		TimeZone: "Europe/Paris", BookingID: uuid.NewString(), LocalStart: "2026-12-08 10:00 (+01:00, Europe/Paris)"}
	with := func(edit func(*receipt.Receipt)) receipt.Receipt { r := base; edit(&r); return r }
	return []receipt.Receipt{
		with(func(r *receipt.Receipt) { r.Status = receipt.StatusConfirmed }),
		with(func(r *receipt.Receipt) { r.Status, r.Reference = receipt.StatusPending, receipt.Reference(key) }),
		with(func(r *receipt.Receipt) {
			r.Status, r.Alternatives = receipt.StatusConflict, []receipt.Slot{{StartsAt: alt, LocalStart: "2026-12-08T12:00"}}
		}),
		with(func(r *receipt.Receipt) { r.Status = receipt.StatusConflict }),
		with(func(r *receipt.Receipt) {
			r.Status, r.Reason = receipt.StatusRejected, &receipt.Reason{Code: string(booking.CodeOutsideBookableHours),
				Message: "paris-11 opens at 08:00 (+01:00)"}
		}),
		with(func(r *receipt.Receipt) {
			r.Status, r.Reason = receipt.StatusRejected, &receipt.Reason{Code: string(booking.CodeTimeOff), Message: "the resource is off"}
			r.Alternatives = []receipt.Slot{{StartsAt: alt, LocalStart: "2026-12-08T12:00"}}
		}),
		with(func(r *receipt.Receipt) {
			r.Status, r.Reason = receipt.StatusRejected, &receipt.Reason{Code: "some_new_code", Message: "resource agent-00 ..."}
		}),
		with(func(r *receipt.Receipt) {
			r.Status, r.Reason = receipt.StatusRejected, &receipt.Reason{Code: "temporarily_unavailable", Retryable: true}
		}),
		with(func(r *receipt.Receipt) { r.Status = receipt.StatusHeld }),
		with(func(r *receipt.Receipt) { r.Status = receipt.StatusCancelled }),
		with(func(r *receipt.Receipt) { r.Status = receipt.StatusExpired }),
		with(func(r *receipt.Receipt) { r.Status, r.ReplacedBy = receipt.StatusRescheduled, uuid.NewString() }),
		with(func(r *receipt.Receipt) { r.Status, r.ReplacedBy = receipt.StatusReassigned, uuid.NewString() }),
	}
}

// Every line the English table has, every other language has too: no
// caller hears a line fall back to English.
func TestEveryLineInEveryLanguage(t *testing.T) {
	t.Parallel()
	for _, lang := range []Lang{Chinese, French} {
		for key := range tables[English] {
			require.Contains(t, tables[lang], key, "%s lacks %s", lang, key)
		}
		require.Len(t, tables[lang], len(tables[English])+map[Lang]int{French: 1}[lang], "%s has lines English lacks", lang)
	}
}

func TestSpokenLinesCarryNoIDOffsetOrUUID(t *testing.T) {
	t.Parallel()
	key := uuid.NewString()
	for _, lang := range []Lang{English, Chinese, French} {
		s := Speaker{Lang: lang, Names: names}
		for _, r := range every(key) {
			line := s.Receipt(r)
			require.NotEmpty(t, line)
			require.NotContains(t, line, key, "%s %s", lang, r.Status)
			for _, re := range leakage {
				require.False(t, re.MatchString(line), "%s %s: %q matches %s", lang, r.Status, line, re)
			}
		}
	}
}

func TestOnlyConfirmedIsWordedAsBooked(t *testing.T) {
	t.Parallel()
	for _, r := range every("k") {
		en := Speaker{Lang: English, Names: names}.Receipt(r)
		zh := Speaker{Lang: Chinese, Names: names}.Receipt(r)
		fr := Speaker{Lang: French, Names: names}.Receipt(r)
		if r.Status == receipt.StatusConfirmed {
			require.Regexp(t, `^Confirmed: a viewing of the Marais flat with Claire on Tuesday 8 December at 10 a\.m\., Paris time\.`, en)
			require.Regexp(t, `^已确认：巴黎时间12月8日星期二上午10点看房，房源是the Marais flat，由Claire带看。`, zh)
			require.Regexp(t, `^Confirmé : une visite de the Marais flat avec Claire le mardi 8 décembre à 10 h, heure de Paris\.`, fr)
			continue
		}
		require.NotContains(t, en, "Confirmed", r.Status)
		require.NotContains(t, zh, "已确认", r.Status)
		require.False(t, strings.HasPrefix(fr, "Confirmé"), "%s: %s", r.Status, fr)
	}
}

func TestSpokenTimes(t *testing.T) {
	t.Parallel()
	en, zh, fr := Speaker{Lang: English}, Speaker{Lang: Chinese}, Speaker{Lang: French}
	for _, tc := range []struct {
		at         time.Time
		zone       string
		en, zh, fr string
	}{
		{start, "Europe/Paris", "Tuesday 8 December at 10 a.m., Paris time", "巴黎时间12月8日星期二上午10点",
			"mardi 8 décembre à 10 h, heure de Paris"},
		{start.Add(3*time.Hour + 30*time.Minute), "Europe/Paris", "Tuesday 8 December at 1:30 p.m., Paris time", "巴黎时间12月8日星期二下午1点30分",
			"mardi 8 décembre à 13 h 30, heure de Paris"},
		{start.Add(2 * time.Hour), "Europe/Paris", "Tuesday 8 December at 12 p.m., Paris time", "巴黎时间12月8日星期二中午12点",
			"mardi 8 décembre à midi, heure de Paris"},
		{start, "America/New_York", "Tuesday 8 December at 4 a.m., New York time", "纽约时间12月8日星期二上午4点",
			"mardi 8 décembre à 4 h, heure de New York"},
		{start, "America/Argentina/Ushuaia", "Tuesday 8 December at 6 a.m., Ushuaia time", "当地时间12月8日星期二上午6点",
			"mardi 8 décembre à 6 h, heure d'Ushuaia"},
		{start.AddDate(0, 0, -7).Add(-9 * time.Hour), "Europe/London", "Tuesday 1 December at 12 a.m., London time", "伦敦时间12月1日星期二上午12点",
			"mardi 1er décembre à minuit, heure de Londres"},
	} {
		require.Equal(t, tc.en, en.When(tc.at, tc.zone))
		require.Equal(t, tc.zh, zh.When(tc.at, tc.zone))
		require.Equal(t, tc.fr, fr.When(tc.at, tc.zone))
	}
}

func TestWithoutANameTheLineSaysWhatItIs(t *testing.T) {
	t.Parallel()
	r := every("k")[0]
	require.Contains(t, Speaker{Lang: English}.Receipt(r), "a viewing of the property with the agent")
	require.Contains(t, Speaker{Lang: French}.Receipt(r), "une visite de ce bien avec l'agent")
	_, err := ParseLang("de")
	require.ErrorContains(t, err, "use en, fr or zh")
	for tag, want := range map[string]Lang{"": English, "en-GB": English, "zh-CN": Chinese, "zh_Hans": Chinese, "fr": French, "fr-FR": French} {
		got, err := ParseLang(tag)
		require.NoError(t, err)
		require.Equal(t, want, got, tag)
	}
}

func TestTheDSTQuestionsNameTheirCandidates(t *testing.T) {
	t.Parallel()
	earlier := time.Date(2027, 3, 28, 0, 30, 0, 0, time.UTC) // 1:30 CET
	later := time.Date(2027, 3, 28, 1, 30, 0, 0, time.UTC)   // 3:30 CEST
	en := Speaker{Lang: English}.LocalTimeQuestion(false, "2027-03-28T02:30", earlier, later, "Europe/Paris")
	require.Equal(t, "Sunday 28 March at 2:30 a.m. does not exist there: the clocks go forward that night. "+
		"Ask the caller which they mean, Sunday 28 March at 1:30 a.m., Paris time or Sunday 28 March at 3:30 a.m., Paris time. Nothing is booked.", en)
	zh := Speaker{Lang: Chinese}.LocalTimeQuestion(true, "2027-10-31T02:30", earlier, later, "Europe/Paris")
	require.Contains(t, zh, "10月31日星期日上午2点30分")
	fr := Speaker{Lang: French}.LocalTimeQuestion(false, "2027-03-28T02:30", earlier, later, "Europe/Paris")
	require.Equal(t, "dimanche 28 mars à 2 h 30 n'existe pas là-bas : on avance l'heure cette nuit-là. Demandez à l'appelant s'il veut dire "+
		"le dimanche 28 mars à 1 h 30, heure de Paris ou le dimanche 28 mars à 3 h 30, heure de Paris. Rien n'est réservé.", fr)
	for _, line := range []string{en, zh, fr} {
		for _, re := range leakage {
			require.False(t, re.MatchString(line), "%q matches %s", line, re)
		}
	}
}

// A call never sent changed nothing, but the booking may stand (the
// same key's first call may have confirmed it before the platform gave
// up waiting): its line says this call did nothing, never "NOT booked".
func TestACallNeverSentIsNotWordedAsNotBooked(t *testing.T) {
	t.Parallel()
	r := receipt.Receipt{RequestKey: "k", Status: receipt.StatusRejected, Reason: &receipt.Reason{Code: "temporarily_unavailable", Retryable: true}}
	for lang, booked := range map[Lang]string{English: "NOT booked", French: "PAS réservé", Chinese: "未预订"} {
		line := Speaker{Lang: lang, Names: names}.Receipt(r)
		require.NotContains(t, line, booked, lang)
		require.NotEmpty(t, line)
	}
}

// A reassignment changes the agent, not the time (F3): the caller hears
// and reads that the viewing stands at its time with the new agent, and
// nothing of a move.
func TestAReassignmentIsWordedAsTheSameTimeWithAnotherAgent(t *testing.T) {
	t.Parallel()
	r := receipt.Receipt{RequestKey: "k", Status: receipt.StatusReassigned, PropertyRef: "paris-11", AgentRef: "agent-01",
		StartsAt: &start, TimeZone: "Europe/Paris", ReplacedBy: "k2"}
	b := booking.Booking{RequestKey: "k2", Intent: booking.Intent{PropertyID: "paris-11", AgentID: "agent-01", StartsAt: start,
		EndsAt: start.Add(30 * time.Minute), TimeZone: "Europe/Paris", Replaces: "k"}}
	with := map[string]string{"paris-11": "the Marais flat", "agent-01": "Hugo"}
	for lang, want := range map[Lang]struct{ line, text, notMoved string }{
		English: {"Same time, same property, now with Hugo: the viewing on Tuesday 8 December at 10 a.m., Paris time.",
			"Your viewing of the Marais flat is now with Hugo, at the same time: Tuesday 8 December at 10 a.m., Paris time.", "moved"},
		French: {"Même heure, même bien, désormais avec Hugo : la visite du mardi 8 décembre à 10 h, heure de Paris.",
			"Votre visite de the Marais flat se fera désormais avec Hugo, à la même heure : le mardi 8 décembre à 10 h, heure de Paris.", "déplacée"},
		Chinese: {"时间和房源不变，现改由Hugo接待：巴黎时间12月8日星期二上午10点的看房。",
			"您预约的the Marais flat看房现改由Hugo接待，时间不变：巴黎时间12月8日星期二上午10点。", "改到"},
	} {
		s := Speaker{Lang: lang, Names: with}
		line, text := s.Receipt(r), s.Message(booking.MessageReassigned, b)
		require.True(t, strings.HasPrefix(line, want.line), "%s: %s", lang, line)
		require.True(t, strings.HasPrefix(text, want.text), "%s: %s", lang, text)
		require.NotContains(t, line+text, want.notMoved, lang)
		require.Contains(t, s.Subject(booking.MessageReassigned, b), "Hugo", lang)
	}
}

package speech

import (
	"strconv"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/localtime"
)

// When speaks an instant as a caller hears it in zone: "Tuesday 8
// December at 10 a.m., Paris time", "巴黎时间12月8日星期二上午10点", "mardi
// 8 décembre à 10 h, heure de Paris". The
// zone is named by its city, never by an offset or an IANA id.
func (s Speaker) When(t time.Time, zone string) string {
	loc, err := localtime.LoadZone(zone)
	if err != nil {
		loc = time.UTC
	}
	lt := t.In(loc)
	date := s.render("date", map[string]string{"weekday": s.weekday(lt.Weekday()), "day": s.day(lt.Day()),
		"month": s.month(lt.Month())})
	return s.render("at", map[string]string{"date": date, "time": s.clock(lt), "zone": s.zone(zone)})
}

// LocalTimeQuestion asks which instant a caller meant by a local time the
// clocks skip (gap: the two candidates, spoken) or pass twice (overlap).
func (s Speaker) LocalTimeQuestion(overlap bool, local string, first, second time.Time, zone string) string {
	key := "gap"
	if overlap {
		key = "overlap"
	}
	return s.render(key, map[string]string{"local": s.wall(local), "first": s.When(first, zone), "second": s.When(second, zone)})
}

// wall speaks a local wall time (YYYY-MM-DDTHH:MM) that may have no
// instant, with no zone.
func (s Speaker) wall(local string) string {
	t, err := time.Parse(localtime.Layout, local)
	if err != nil {
		return local
	}
	date := s.render("date", map[string]string{"weekday": s.weekday(t.Weekday()), "day": s.day(t.Day()), "month": s.month(t.Month())})
	return s.render("wall", map[string]string{"date": date, "time": s.clock(t)})
}

func (s Speaker) clock(t time.Time) string {
	h, m := t.Hour(), t.Minute()
	if s.Lang == French {
		return frenchClock(h, m)
	}
	if s.Lang == Chinese {
		part := map[bool]string{true: "上午", false: "下午"}[h < 12]
		h12 := h % 12
		if h12 == 0 {
			h12 = 12
		}
		if h == 12 {
			part = "中午"
		}
		out := part + strconv.Itoa(h12) + "点"
		if m != 0 {
			out += strconv.Itoa(m) + "分"
		}
		return out
	}
	suffix := map[bool]string{true: "a.m.", false: "p.m."}[h < 12]
	h12 := h % 12
	if h12 == 0 {
		h12 = 12
	}
	if m == 0 {
		return strconv.Itoa(h12) + " " + suffix
	}
	return strconv.Itoa(h12) + ":" + twoDigits(m) + " " + suffix
}

// frenchClock is the 24-hour clock as French speakers say it: "10 h",
// "14 h 30", "midi", "minuit".
func frenchClock(h, m int) string {
	out := strconv.Itoa(h) + " h"
	switch h {
	case 0:
		out = "minuit"
	case 12:
		out = "midi"
	}
	if m != 0 {
		out += " " + twoDigits(m)
	}
	return out
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

func (s Speaker) weekday(d time.Weekday) string {
	switch s.Lang {
	case Chinese:
		return "星期" + [...]string{"日", "一", "二", "三", "四", "五", "六"}[d]
	case French:
		return [...]string{"dimanche", "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi"}[d]
	}
	return d.String()
}

func (s Speaker) month(m time.Month) string {
	switch s.Lang {
	case Chinese:
		return strconv.Itoa(int(m)) + "月"
	case French:
		return [...]string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
			"novembre", "décembre"}[m-1]
	}
	return m.String()
}

// day is the day of the month: the first is "1er" in French.
func (s Speaker) day(d int) string {
	if s.Lang == French && d == 1 {
		return "1er"
	}
	return strconv.Itoa(d)
}

// cityNames are the Chinese names of the zones' cities a caller would
// hear; any other zone is "local time" (当地时间).
var cityNames = map[string]string{"Paris": "巴黎", "London": "伦敦", "Berlin": "柏林", "Madrid": "马德里", "Rome": "罗马",
	"New_York": "纽约", "Los_Angeles": "洛杉矶", "Chicago": "芝加哥", "Toronto": "多伦多", "Tokyo": "东京",
	"Shanghai": "上海", "Hong_Kong": "香港", "Taipei": "台北", "Singapore": "新加坡", "Sydney": "悉尼", "Dubai": "迪拜"}

// frenchCities are the French names of the zones' cities that differ
// from their English ones.
var frenchCities = map[string]string{"London": "Londres", "Singapore": "Singapour", "Dubai": "Dubaï", "Lisbon": "Lisbonne",
	"Brussels": "Bruxelles", "Vienna": "Vienne", "Warsaw": "Varsovie", "Prague": "Prague", "Athens": "Athènes", "Moscow": "Moscou",
	"Mexico_City": "Mexico", "Montreal": "Montréal", "Algiers": "Alger", "Tunis": "Tunis", "Casablanca": "Casablanca"}

// zone names a zone by its city: "Paris time", "巴黎时间", "heure de Paris".
func (s Speaker) zone(zone string) string {
	i := strings.LastIndex(zone, "/")
	if i < 0 || zone == "" {
		return s.word("zone_local")
	}
	city, key := zone[i+1:], "zone_suffix"
	switch s.Lang {
	case Chinese:
		name, ok := cityNames[city]
		if !ok {
			return s.word("zone_local")
		}
		city = name
	case French:
		if name, ok := frenchCities[city]; ok {
			city = name
		}
		city = strings.ReplaceAll(city, "_", " ")
		if strings.ContainsRune("AEIOU", rune(city[0])) {
			key = "zone_suffix_v" // "heure d'Amsterdam"
		}
	default:
		city = strings.ReplaceAll(city, "_", " ")
	}
	return s.render(key, map[string]string{"city": city})
}

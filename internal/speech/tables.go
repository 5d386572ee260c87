package speech

import (
	"github.com/bookingsaga/bookingsaga/booking"
)

// reasonKey is a refusal code's line in the tables.
func reasonKey(c booking.Code) string { return "reason_" + string(c) }

// tables hold every line, by language. A status's line is keyed by the
// status; {placeholders} are filled by render.
var tables = map[Lang]map[string]string{
	English: {
		"confirmed": "Confirmed: a viewing of {property} with {agent} on {when}. The booking reference is {reference}.",
		"pending_reconciliation": "NOT confirmed yet: the booking system has not answered. Do not say it is booked. " +
			"Reference {reference}; check again with booking_status.",
		"conflict":              "{when} is no longer free. Free instead: {alternatives}. Ask the caller which one they want.",
		"conflict_none":         "{when} is no longer free, and no nearby time is free either. Ask the caller for another day.",
		"rejected":              "NOT booked: {reason}.",
		"rejected_alternatives": "NOT booked: {reason}. Free instead: {alternatives}. Ask the caller which one they want.",
		"rejected_retry":        "NOT booked: a temporary problem. Try the same call again in a moment.",
		"held":                  "{when} is held for the caller but NOT booked yet; book it to confirm.",
		"cancelled":             "Cancelled: the viewing on {when}.",
		"expired":               "The hold on that time expired; nothing is booked.",
		"rescheduled":           "This booking was moved to another time; nothing is booked on {when} any more.",
		"nothing":               "Nothing is booked yet.",
		"readback":              "Chosen, not booked: {property} on {when}. Read this back to the caller and book only once they say yes.",
		"gap":                   "{local} does not exist there: the clocks go forward that night. Ask the caller which they mean, {first} or {second}. Nothing is booked.",
		"overlap": "{local} happens twice there: the clocks go back that night. Ask the caller which they mean, the first (before the change) " +
			"or the second (an hour later). Nothing is booked.",

		"requested_time": "the requested time",
		"the_property":   "the property",
		"the_agent":      "the agent",
		"list_sep":       "; ",
		"zone_suffix":    "{city} time",
		"zone_local":     "local time",
		"date":           "{weekday} {day} {month}",
		"at":             "{date} at {time}, {zone}",
		"wall":           "{date} at {time}",

		"reason_default": "the booking system refused it; offer another time",
		reasonKey(booking.CodePolicyVersionChanged): "the booking rules changed since availability was read; check availability again",
		reasonKey(booking.CodeZoneRulesChanged):     "the time zone rules changed since availability was read; check availability again",
		reasonKey(booking.CodeOutsideBookableHours): "that time is outside visiting hours; offer another time",
		reasonKey(booking.CodeTooShortNotice):       "that time is too soon to arrange; offer a later one",
		reasonKey(booking.CodeStartsInPast):         "that time has already passed",
		reasonKey(booking.CodeRequestKeyReused):     "this choice was already used for another time; select the slot again",
		reasonKey(booking.CodeReferenceCollision):   "this choice could not get a reference of its own; select the slot again",
		reasonKey(booking.CodeBookingLost):          "the booking system lost this booking; apologise and offer another time",
		reasonKey(booking.CodeHoldExpired):          "the hold expired; select the slot again",
		reasonKey(booking.CodeIntentExpired):        "the choice expired; select the slot again",
		reasonKey(booking.CodeOutsideHours):         "the property or the agent is not available at that time",
		reasonKey(booking.CodeTimeOff):              "someone the viewing needs is away at that time",
		reasonKey(booking.CodeLimitReached):         "that day is fully booked",
		reasonKey(booking.CodeBeyondHorizon):        "that date is too far ahead to book yet",
	},
	Chinese: {
		"confirmed":              "已确认：{when}看房，房源是{property}，由{agent}带看。预订参考号是 {reference}。",
		"pending_reconciliation": "尚未确认：预订系统还没有答复。不要说已经订好。参考号 {reference}；稍后用 booking_status 再查。",
		"conflict":               "{when}已经被订走了。可选时间：{alternatives}。请问来电者要哪一个。",
		"conflict_none":          "{when}已经被订走了，附近也没有空闲时间。请来电者换一天。",
		"rejected":               "未预订：{reason}。",
		"rejected_alternatives":  "未预订：{reason}。可选时间：{alternatives}。请问来电者要哪一个。",
		"rejected_retry":         "未预订：暂时出了问题。请稍后用同样的请求再试一次。",
		"held":                   "{when}已为来电者保留，但还没有预订；调用 book 才算确认。",
		"cancelled":              "已取消：{when}的看房。",
		"expired":                "该时间的保留已过期，没有任何预订。",
		"rescheduled":            "这个预订已改到其他时间；{when}不再有预订。",
		"nothing":                "还没有任何预订。",
		"readback":               "已选择，尚未预订：{property}，{when}。请向来电者复述，对方说可以后再预订。",
		"gap":                    "当地没有{local}：那天夜里时钟拨快。请问来电者指的是{first}还是{second}。尚未预订。",
		"overlap":                "当地的{local}会出现两次：那天夜里时钟拨慢。请问来电者指的是第一次（改时之前）还是第二次（一小时后）。尚未预订。",

		"requested_time": "所选时间",
		"the_property":   "该房源",
		"the_agent":      "经纪人",
		"list_sep":       "；",
		"zone_suffix":    "{city}时间",
		"zone_local":     "当地时间",
		"date":           "{month}{day}日{weekday}",
		"at":             "{zone}{date}{time}",
		"wall":           "{date}{time}",

		"reason_default": "预订系统拒绝了这个请求，请提供其他时间",
		reasonKey(booking.CodePolicyVersionChanged): "查询空闲时间之后预订规则有变，请重新查询",
		reasonKey(booking.CodeZoneRulesChanged):     "查询空闲时间之后时区规则有变，请重新查询",
		reasonKey(booking.CodeOutsideBookableHours): "这个时间不在看房时段内，请提供其他时间",
		reasonKey(booking.CodeTooShortNotice):       "这个时间太近来不及安排，请提供晚一点的时间",
		reasonKey(booking.CodeStartsInPast):         "这个时间已经过去了",
		reasonKey(booking.CodeRequestKeyReused):     "这个选择已用于另一个时间，请重新选择时段",
		reasonKey(booking.CodeReferenceCollision):   "这个选择没能得到唯一的参考号，请重新选择时段",
		reasonKey(booking.CodeBookingLost):          "预订系统丢失了这个预订，请致歉并提供其他时间",
		reasonKey(booking.CodeHoldExpired):          "保留已过期，请重新选择时段",
		reasonKey(booking.CodeIntentExpired):        "选择已过期，请重新选择时段",
		reasonKey(booking.CodeOutsideHours):         "房源或经纪人在这个时间不可预约",
		reasonKey(booking.CodeTimeOff):              "看房所需的人员这个时间不在",
		reasonKey(booking.CodeLimitReached):         "当天的预约已满",
		reasonKey(booking.CodeBeyondHorizon):        "这个日期太远，暂时不能预约",
	},
}

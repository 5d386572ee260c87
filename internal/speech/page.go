package speech

import (
	"maps"

	"github.com/bookingsaga/bookingsaga/booking"
)

// Page is a line of the caller's own page (api/callerpage) about b:
// key is the line's name without its "page_" prefix. The booking's lines
// take the messages' words ({property}, {place}, {with}, {when},
// {reference}).
func (s Speaker) Page(key string, b booking.Booking) string {
	return s.render("page_"+key, s.messageArgs(b))
}

// PageLine is a line of the caller's page about no booking (its title,
// how to call, why a link opens nothing).
func (s Speaker) PageLine(key string) string {
	return s.render("page_"+key, map[string]string{"phone": s.Phone})
}

// pageTables are the page's lines, by language, merged into tables.
var pageTables = map[Lang]map[string]string{
	English: {
		"page_title":         "Your viewing",
		"page_confirmed":     "Your viewing of {property}{place}{with} is confirmed for {when}.",
		"page_cancelled":     "Your viewing of {property}{place} on {when} is cancelled.",
		"page_started":       "Your viewing of {property}{place} on {when} has started; it can no longer be changed here.",
		"page_gone":          "This viewing is no longer booked.",
		"page_reference":     "Reference {reference}",
		"page_move":          "Move it to another free time",
		"page_move_button":   "Move my viewing",
		"page_no_slots":      "No other time is free in the next two weeks.",
		"page_cancel":        "Cancel it",
		"page_cancel_button": "Cancel my viewing",
		"page_pending":       "We are still confirming this change (reference {reference}); it may have gone through. Open this page again in a few minutes to see where your viewing stands.",
		"page_unsure":        "We could not confirm that just now. Open this page again in a minute to see where your viewing stands.",
		"page_taken":         "That time was just taken. These times are free now.",
		"page_not_offered":   "That time is not one offered here. Pick one of these.",
		"page_refused":       "That did not go through, and nothing changed. Pick another time, or call us.",
		"page_unknown":       "This link opens nothing. Check that it is whole, as it came in your message.",
		"page_expired":       "This link has expired: the viewing it was for is over.",
		"page_revoked":       "This link no longer works. Your newer messages carry a new one.",
		"page_bad_form":      "This form has expired, and nothing changed. Open the link again.",
		"page_busy":          "Too many tries with this link. Wait a minute, then try again.",
		"page_call_phone":    "Questions? Call us on {phone}.",
		"page_call":          "Questions? Call us back.",
	},
	French: {
		"page_title":         "Votre visite",
		"page_confirmed":     "Votre visite de {property}{place}{with} est confirmée pour le {when}.",
		"page_cancelled":     "Votre visite de {property}{place} du {when} est annulée.",
		"page_started":       "Votre visite de {property}{place} du {when} a commencé ; elle ne peut plus être modifiée ici.",
		"page_gone":          "Cette visite n'est plus réservée.",
		"page_reference":     "Référence {reference}",
		"page_move":          "La déplacer à un autre moment libre",
		"page_move_button":   "Déplacer ma visite",
		"page_no_slots":      "Aucun autre moment n'est libre dans les deux semaines.",
		"page_cancel":        "L'annuler",
		"page_cancel_button": "Annuler ma visite",
		"page_pending":       "Nous confirmons encore ce changement (référence {reference}) ; il a pu aboutir. Rouvrez cette page dans quelques minutes pour voir où en est votre visite.",
		"page_unsure":        "Nous n'avons pas pu le confirmer à l'instant. Rouvrez cette page dans une minute pour voir où en est votre visite.",
		"page_taken":         "Ce moment vient d'être pris. Voici les moments libres maintenant.",
		"page_not_offered":   "Ce moment n'est pas proposé ici. Choisissez-en un parmi ceux-ci.",
		"page_refused":       "Cela n'a pas abouti, et rien n'a changé. Choisissez un autre moment, ou appelez-nous.",
		"page_unknown":       "Ce lien n'ouvre rien. Vérifiez qu'il est complet, tel qu'il figure dans votre message.",
		"page_expired":       "Ce lien a expiré : la visite qu'il concernait est passée.",
		"page_revoked":       "Ce lien ne fonctionne plus. Vos messages plus récents en contiennent un nouveau.",
		"page_bad_form":      "Ce formulaire a expiré, et rien n'a changé. Rouvrez le lien.",
		"page_busy":          "Trop d'essais avec ce lien. Attendez une minute, puis réessayez.",
		"page_call_phone":    "Une question ? Appelez-nous au {phone}.",
		"page_call":          "Une question ? Rappelez-nous.",
	},
	Chinese: {
		"page_title":         "您的看房预约",
		"page_confirmed":     "您预约的{property}{place}看房{with}已确认：{when}。",
		"page_cancelled":     "您预约的{when}{property}{place}看房已取消。",
		"page_started":       "您预约的{when}{property}{place}看房已经开始，无法在此更改。",
		"page_gone":          "此看房已不再预约。",
		"page_reference":     "参考号 {reference}",
		"page_move":          "改到其他空闲时间",
		"page_move_button":   "改期",
		"page_no_slots":      "未来两周内没有其他空闲时间。",
		"page_cancel":        "取消预约",
		"page_cancel_button": "取消看房",
		"page_pending":       "我们仍在确认此更改（参考号 {reference}），它可能已经生效。请几分钟后重新打开此页面查看预约状态。",
		"page_unsure":        "我们暂时无法确认。请一分钟后重新打开此页面查看预约状态。",
		"page_taken":         "该时间刚刚被预约。以下是目前的空闲时间。",
		"page_not_offered":   "该时间不在可选范围内。请从以下时间中选择。",
		"page_refused":       "操作未成功，预约没有任何变化。请选择其他时间，或致电我们。",
		"page_unknown":       "此链接无效。请确认链接完整，与短信中的一致。",
		"page_expired":       "此链接已过期：相关看房已经结束。",
		"page_revoked":       "此链接已失效。您较新的短信中有新的链接。",
		"page_bad_form":      "此表单已过期，预约没有任何变化。请重新打开链接。",
		"page_busy":          "此链接尝试次数过多。请稍等一分钟再试。",
		"page_call_phone":    "有疑问？请致电：{phone}。",
		"page_call":          "有疑问？请回电给我们。",
	},
}

func init() {
	for lang, lines := range pageTables {
		maps.Copy(tables[lang], lines)
	}
}

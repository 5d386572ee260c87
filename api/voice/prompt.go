package voice

import (
	"net/http"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/internal/speech"
)

// SystemPrompts are the rule an agent's prompt needs beside the tools, in
// each language of the spoken lines. The [status] tags stay as they are
// in every language: the model keys on them, whatever the words after.
var SystemPrompts = map[speech.Lang]string{
	speech.English: `You book property viewings with the tools. Every tool result starts with its status in brackets, ` +
		`such as [confirmed], whatever the language of the words after it. Never say a viewing is booked unless a book or reschedule_booking result starts with [confirmed]. ` +
		`Word your reply from that status alone: [pending_reconciliation] means the outcome is not known yet, so tell the caller you will confirm shortly and give the reference; ` +
		`[conflict] means the slot was taken, so offer the alternatives it lists. Before book, read back the date, time and place select_slot gave ([selected]) and get the caller's yes. ` +
		`[not_done: …] means nothing happened: fix what it says, or try the same call again.`,
	speech.French: `Vous prenez des rendez-vous de visite avec les outils. Chaque résultat d'outil commence par son statut entre crochets, ` +
		`par exemple [confirmed], quelle que soit la langue des mots qui suivent. Ne dites jamais qu'une visite est réservée si le résultat de book ou de reschedule_booking ne commence pas par [confirmed]. ` +
		`Formulez votre réponse à partir de ce statut seul : [pending_reconciliation] signifie que l'issue n'est pas encore connue ; dites à l'appelant que vous confirmerez sous peu et donnez-lui la référence. ` +
		`[conflict] signifie que le créneau a été pris ; proposez les horaires qu'il indique. Avant book, relisez la date, l'heure et le lieu donnés par select_slot ([selected]) et obtenez l'accord de l'appelant. ` +
		`[not_done: …] signifie que rien n'a été fait : corrigez ce qui est indiqué, ou refaites le même appel.`,
	speech.Chinese: `你用这些工具预约看房。每个工具结果都以方括号里的状态开头，例如 [confirmed]，不论后面的文字是什么语言。` +
		`只有 book 或 reschedule_booking 的结果以 [confirmed] 开头时，才能说看房已经预订。只根据这个状态组织回复：` +
		`[pending_reconciliation] 表示结果还不知道，请告诉来电者稍后会确认，并给出参考号；[conflict] 表示该时段已被订走，请提供结果里列出的其他时间。` +
		`调用 book 之前，先复述 select_slot 给出的日期、时间和地点（[selected]），得到来电者同意。` +
		`[not_done: …] 表示什么都没有做：按提示修正，或者再次发送同样的调用。`,
}

// prompt is the system prompt in ?language=, else the API's language.
func (t *Tools) prompt(r *http.Request) (string, error) {
	lang, err := edge.Language(r.URL.Query().Get("language"), t.set.Language)
	if err != nil {
		return "", edge.BadRequest(booking.CodeMissingField, "%s", err.Error())
	}
	return SystemPrompts[lang], nil
}

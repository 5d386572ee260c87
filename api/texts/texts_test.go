package texts

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A reply is read as Twilio reads its keywords: the whole message, in
// any case, spaces aside; anything more is no keyword. The reminder's
// word is none Twilio keeps for itself.
func TestARepliesWordIsTheWholeMessage(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		"STOP": "stop", "stop": "stop", " Stop \n": "stop", "unsubscribe": "stop", "optout": "stop", "Revoke": "stop",
		"START": "start", "yes": "start", "Unstop": "start",
		"C": "reconfirm", "c": "reconfirm", "Confirmer": "reconfirm", "确认": "reconfirm",
		"HELP": "help", "info": "help",
		"stop please": "", "C'est bon": "", "help me": "", "": "",
	} {
		require.Equal(t, want, word(body), "%q", body)
	}
	for _, w := range reconfirm {
		require.NotContains(t, append(append(help, optOut...), optIn...), w, "Twilio keeps %s", w)
	}
}

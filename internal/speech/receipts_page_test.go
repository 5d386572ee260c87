package speech

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTheReceiptsPageQuotesTheSpokenLines: the receipts page (docs/receipts.md) quotes
// the real line of each status, in English, Chinese and French, for the
// receipts of every() with the names of names.
func TestTheReceiptsPageQuotesTheSpokenLines(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../docs/receipts.md")
	require.NoError(t, err)
	for _, lang := range []Lang{English, Chinese, French} {
		s := Speaker{Lang: lang, Names: names}
		for _, r := range every("k") {
			line := s.Receipt(r)
			if os.Getenv("PRINT_LINES") != "" {
				t.Logf("%s\t%s\t%s", lang, r.Status, line)
			}
			require.True(t, strings.Contains(string(readme), "`"+line+"`"), "%s %s: %s", lang, r.Status, line)
		}
	}
	// The README quotes the French line of a confirmed booking, with the
	// French name the demo's agency gives the flat.
	front, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	line := Speaker{Lang: French, Names: map[string]string{"paris-11": "l'appartement du Marais", "agent-00": "Claire"}}.Receipt(every("k")[0])
	require.Contains(t, string(front), "`"+line+"`")
}

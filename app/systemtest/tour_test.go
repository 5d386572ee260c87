package systemtest

import (
	"os"
	"os/exec"
	"regexp"
	"strings"

	"github.com/stretchr/testify/require"
)

// tour runs the README's "A 60-second tour" as written, in one shell,
// against the stack: the only changes are the stack's own API address
// for 127.0.0.1:8080 (and its fake Twilio's for :8094) and its dev-agent key for bsk_..., and the store's
// address in DATABASE_URL for the CLI, which finds a stack in its default
// data dir by itself. It returns what the commands printed.
func (d *devStack) tour() string {
	d.t.Helper()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(d.t, err)
	section := string(readme)
	start := strings.Index(section, "## A 60-second tour")
	require.NotEqual(d.t, -1, start, "the README has its tour")
	section = section[start:]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for _, m := range shellBlock.FindAllStringSubmatch(section, -1) {
		script.WriteString(m[1])
	}
	body := strings.ReplaceAll(script.String(), "127.0.0.1:8080", d.api)
	body = strings.ReplaceAll(body, "127.0.0.1:8094", d.sms)
	body = strings.ReplaceAll(body, "bsk_...", d.keys["dev-agent"])
	require.Contains(d.t, body, "curl", "the tour's commands were found")
	cmd := exec.Command("bash", "-c", body)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "DATABASE_URL="+d.dbURL)
	out, err := cmd.CombinedOutput()
	require.NoError(d.t, err, "the tour, as written:\n%s", out)
	return string(out)
}

// shellBlock is a fenced sh block of a Markdown page.
var shellBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")

// requireTourAnswers checks what each of the tour's steps says it shows.
func (d *devStack) requireTourAnswers(out string) {
	d.t.Helper()
	for _, want := range []string{
		`"slots":[`,              // what is free
		`"status":"confirmed"`,   // booked
		`"status":"conflict"`,    // another caller's 10:15
		`"code":"outside_hours"`, // Christmas
		`"body":"Agence Lumière: Your viewing of the Marais flat (12 rue des Rosiers, 75004 Paris) with Claire is confirmed for `,       // the caller's text
		`To change or cancel it: http://` + d.api + `/v/`,                                                                               // with the link to their page
		`<p class="status" id="status">Your viewing of the Marais flat (12 rue des Rosiers, 75004 Paris) with Claire is confirmed for `, // which opens it
		`Confirmé : une visite`, // the MCP call, in French
		`"structuredContent"`,   // MCP's typed answer
		"BS-",                   // references, in the CLI's day list
	} {
		require.Contains(d.t, out, want, "the tour's output:\n%s", out)
	}
	booked := regexp.MustCompile(`"status":"confirmed"[^}]*?"booking_id":"([0-9a-f-]{36})"`).FindAllStringSubmatch(out, -1)
	require.GreaterOrEqual(d.t, len(booked), 2, "the booking and its retry: %s", out)
	require.Equal(d.t, booked[0][1], booked[1][1], "the retry is the same booking")
}

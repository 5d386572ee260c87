package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/internal/apikey"
	"github.com/bookingsaga/bookingsaga/payloadcodec"
)

// keys manages the API keys file: "keys new" makes a key, prints its
// secret once and stores only its hash. Revoking is deleting its entry;
// a running API reads the file again within a second.
func keys(args []string, out io.Writer) error {
	if len(args) > 0 && args[0] == "payload" {
		return payloadKey(args[1:], out)
	}
	if len(args) == 0 || args[0] != "new" {
		return errors.New("usage: starter keys new -file FILE -name NAME -scopes agent[,admin,ops] [-agency ID] | starter keys new -file FILE -name NAME -scopes platform | starter keys payload -file FILE")
	}
	fs := flag.NewFlagSet("keys new", flag.ContinueOnError)
	file := fs.String("file", envOr("API_KEYS_FILE", ""), "the keys file (env API_KEYS_FILE); created 0600 if missing")
	name := fs.String("name", "", "the key's name, shown in logs (e.g. vapi-prod-2026-12)")
	scopes := fs.String("scopes", string(apikey.ScopeAgent), "comma-separated: agent, admin, ops; or platform alone")
	agencyID := fs.String("agency", "", "the id of the agency the key acts for (PUT /v1/agencies/{id} makes one); none: the default agency")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *file == "" {
		return errors.New("keys new: -file is required")
	}
	var sc []apikey.Scope
	for _, s := range strings.Split(*scopes, ",") {
		sc = append(sc, apikey.Scope(strings.TrimSpace(s)))
	}
	secret, k, err := apikey.NewKey(*name, sc...)
	if err != nil {
		return fmt.Errorf("keys new: %w", err)
	}
	k.Agency = *agencyID
	if err := apikey.SaveKey(*file, k, false); err != nil {
		return fmt.Errorf("keys new: %w", err)
	}
	fmt.Fprintf(out, "%s\n", secret)
	return nil
}

// payloadKey adds a payload encryption key to a payload keys file and
// makes it the current one (a rotation, when the file had keys): new
// payloads use it, and older ones stay readable under the keys before.
func payloadKey(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("keys payload", flag.ContinueOnError)
	file := fs.String("file", os.Getenv("PAYLOAD_KEYS_FILE"), "the payload keys file (env PAYLOAD_KEYS_FILE); created 0600 if missing")
	agencyID := fs.String("agency", "", "the agency the key encrypts for, which then has keys of its own; none: the deployment's, for every other agency")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" {
		return errors.New("keys payload: -file is required")
	}
	if *agencyID != "" {
		if err := agency.ValidID(*agencyID); err != nil {
			return fmt.Errorf("keys payload: %w", err)
		}
	}
	id, err := payloadcodec.AddKey(*file, *agencyID)
	if err != nil {
		return fmt.Errorf("keys payload: %w", err)
	}
	whose := "the deployment's"
	if *agencyID != "" {
		whose = "agency " + *agencyID + "'s"
	}
	fmt.Fprintf(out, "payload key %s is now %s current key in %s; restart the workers and the API to use it\n", id, whose, *file)
	return nil
}

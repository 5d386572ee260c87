package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/bookingsaga/bookingsaga/api"
)

// keys manages the API keys file: "keys new" makes a key, prints its
// secret once and stores only its hash. Revoking is deleting its entry;
// a running API reads the file again within a second.
func keys(args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "new" {
		return errors.New("usage: starter keys new -file FILE -name NAME -scopes agent[,admin,ops]")
	}
	fs := flag.NewFlagSet("keys new", flag.ContinueOnError)
	file := fs.String("file", envOr("API_KEYS_FILE", ""), "the keys file (env API_KEYS_FILE); created 0600 if missing")
	name := fs.String("name", "", "the key's name, shown in logs (e.g. vapi-prod-2026-12)")
	scopes := fs.String("scopes", string(api.ScopeAgent), "comma-separated: agent, admin, ops")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *file == "" {
		return errors.New("keys new: -file is required")
	}
	var sc []api.Scope
	for _, s := range strings.Split(*scopes, ",") {
		sc = append(sc, api.Scope(strings.TrimSpace(s)))
	}
	secret, k, err := api.NewKey(*name, sc...)
	if err != nil {
		return fmt.Errorf("keys new: %w", err)
	}
	if err := api.SaveKey(*file, k, false); err != nil {
		return fmt.Errorf("keys new: %w", err)
	}
	fmt.Fprintf(out, "%s\n", secret)
	return nil
}

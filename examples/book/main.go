// Command book is an agent backend in a module of its own: it books a
// viewing through bookingsaga's public Go client, reads the receipt back
// and cancels it. Run it against the dev stack (`go run ./worker -dev` at
// the repository's root):
//
//	cd examples && go run ./book
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/payloadcodec"
	"github.com/bookingsaga/bookingsaga/sagaclient"
)

func main() {
	addr := flag.String("temporal-address", "127.0.0.1:7233", "Temporal frontend")
	policy := flag.String("policy", "demo-2026-11", "the policy version availability gave")
	keys := flag.String("payload-keys", "../.bookingsaga/payload-keys.json", "the payload keys the workers encrypt with (the dev stack's)")
	flag.Parse()
	if err := run(*addr, *policy, *keys); err != nil {
		log.Fatal(err)
	}
}

func run(addr, policy, keysFile string) error {
	// Payloads are encrypted: every client of the namespace uses the keys.
	keys, err := payloadcodec.LoadKeys(keysFile)
	if err != nil {
		return err
	}
	tc, err := client.Dial(client.Options{HostPort: addr, DataConverter: payloadcodec.New(keys).DataConverter()})
	if err != nil {
		return fmt.Errorf("connect temporal: %w", err)
	}
	defer tc.Close()
	c := sagaclient.New(tc, sagaclient.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// 14:00 in Paris four days on, by the service's zone rules.
	start, err := booking.LocalStart(time.Now().AddDate(0, 0, 4).Format(time.DateOnly)+"T14:00", "Europe/Paris")
	if err != nil {
		return err
	}
	intent := booking.Intent{PropertyID: "paris-marais-12", AgentID: "agent-claire",
		StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "Europe/Paris"}

	// One key per intent the caller settles on, reused by every retry.
	key, err := c.Select(ctx, "example-"+uuid.NewString(), intent)
	if err != nil {
		return err
	}
	booked, err := c.Commit(ctx, key, booking.CommitRequest{Intent: intent, ExpectedPolicyVersion: policy})
	if err != nil {
		return err
	}
	fmt.Println("book:", booked.Status)
	now, err := c.Status(ctx, key)
	if err != nil {
		return err
	}
	fmt.Println("status:", now.Status)
	cancelled, err := c.Cancel(ctx, key)
	if err != nil {
		return err
	}
	fmt.Println("cancel:", cancelled.Status)
	return nil
}

package sagaclient_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// An agent backend books a viewing, reads the receipt back and cancels it,
// through exported names only. (Run against `go run ./worker -dev`; the
// receipts' statuses are what the agent words its replies from.)
func Example() {
	tc, err := client.Dial(client.Options{HostPort: "127.0.0.1:7233"})
	if err != nil {
		log.Fatal(err)
	}
	defer tc.Close()
	c := sagaclient.New(tc, sagaclient.Options{})
	ctx := context.Background()

	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		log.Fatal(err)
	}
	day := time.Now().In(paris).AddDate(0, 0, 3)
	start := time.Date(day.Year(), day.Month(), day.Day(), 10, 0, 0, 0, paris)
	intent := booking.Intent{PropertyID: "paris-marais-12", AgentID: "agent-claire",
		StartsAt: start, EndsAt: start.Add(30 * time.Minute), TimeZone: "Europe/Paris"}

	// One key per intent the caller settles on, reused by every retry.
	key, err := c.Select(ctx, "call-42", intent)
	if err != nil {
		log.Fatal(err)
	}
	booked, err := c.Commit(ctx, key, workflows.CommitRequest{Intent: intent, ExpectedPolicyVersion: "demo-2026-11"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("book:", booked.Status)

	now, err := c.Status(ctx, key)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", now.Status)

	cancelled, err := c.Cancel(ctx, key)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("cancel:", cancelled.Status)
}

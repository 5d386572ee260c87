// Command screenshot takes the README's picture of a booking saga in the
// Temporal Web UI: it opens the saga's page in headless Chromium, shows its
// User Metadata tab, waits until the summary and the current details are
// there, and writes a PNG. With -page, it photographs a caller's own page
// instead (docs/receipts.md). It is a module
// of its own so that the service does not link a browser driver.
//
//	go run . -key <request key> -out ../../docs/ui-booking.png
//
// scripts/screenshot books a viewing on the dev stack and runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"time"

	"github.com/chromedp/chromedp"
)

func main() {
	ui := flag.String("ui", "http://127.0.0.1:8233", "the Temporal Web UI")
	namespace := flag.String("namespace", "default", "the namespace")
	key := flag.String("key", "", "the saga's workflow id (its request key)")
	out := flag.String("out", "ui-booking.png", "the PNG of the saga's page")
	list := flag.String("list", "", "also the PNG of the namespace's bookings, with the booking columns shown")
	browser := flag.String("chromium", "/usr/bin/chromium", "the browser (Debian's chromium)")
	wait := flag.Duration("timeout", time.Minute, "how long the page may take")
	page := flag.String("page", "", "photograph this page instead (a caller's own page, from their text), at a phone's width")
	flag.Parse()
	if *page != "" {
		ctx, cancel := browse(*browser, *wait, 420, 900)
		defer cancel()
		if err := callerPage(ctx, *page, *out); err != nil {
			log.Fatal("screenshot: ", err)
		}
		fmt.Println("wrote", *out)
		return
	}
	if *key == "" {
		log.Fatal("screenshot: -key is required")
	}
	ctx, cancel := browse(*browser, *wait, 1440, 1000)
	defer cancel()
	ns := *ui + "/namespaces/" + url.PathEscape(*namespace)
	if err := saga(ctx, ns+"/workflows/"+url.PathEscape(*key), *out); err != nil {
		log.Fatal("screenshot: ", err)
	}
	fmt.Println("wrote", *out)
	if *list != "" {
		if err := bookings(ctx, *namespace, ns+"/workflows?query="+url.QueryEscape(`WorkflowType = "Booking"`), *list); err != nil {
			log.Fatal("screenshot: ", err)
		}
		fmt.Println("wrote", *list)
	}
}

// browse starts headless Chromium, its window width by height, for at
// most wait.
func browse(browser string, wait time.Duration, width, height int) (context.Context, context.CancelFunc) {
	// The flags keep Chromium off the network it cannot reach here, and
	// out of a sandbox root cannot use.
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true), chromedp.WindowSize(width, height))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, wait)
	return ctx, func() { cancel(); cancelTab(); cancelAlloc() }
}

// saga photographs a saga's User Metadata tab.
func saga(ctx context.Context, page, out string) error {
	err := chromedp.Do(ctx,
		chromedp.Navigate(page),
		chromedp.Click(chromedp.Search(`//a[contains(., "User Metadata")]`)),
		// The summary is decoded by the codec server from the browser:
		// once it and the details show, the page has what the picture is for.
		chromedp.WaitVisible(chromedp.Search(`//*[contains(text(), "Viewing ·")]`)),
		chromedp.WaitVisible(chromedp.Search(`//*[contains(text(), "the agent is told")]`)),
		chromedp.Sleep(time.Second), // the history's rows render after
	)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s did not show the saga's summary and details in time (is the dev stack running, and the key a saga's?)", page)
	}
	if err != nil {
		return err
	}
	return screenshot(ctx, out)
}

// callerPage photographs a caller's own page once its status shows.
func callerPage(ctx context.Context, page, out string) error {
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#status"))); err != nil {
		return fmt.Errorf("%s did not show a caller's page in time: %w", page, err)
	}
	return screenshot(ctx, out)
}

// bookingColumns are the list's columns for booking sagas: the status the
// agent was given, with what and when, beside Temporal's own.
const bookingColumns = `[{"label":"Status"},{"label":"BookingStatus"},{"label":"BookingProperty"},{"label":"BookingSlotStart"},` +
	`{"label":"BookingReference"},{"label":"BookingCalendarSynced"},{"label":"Workflow ID"},{"label":"Start"}]`

// bookings photographs the list of booking sagas with bookingColumns, set
// where the UI keeps a browser's column choice (its local storage).
func bookings(ctx context.Context, namespace, page, out string) error {
	set := fmt.Sprintf(`localStorage.setItem("namespace-workflow-table-columns", JSON.stringify({%q: %s}))`, namespace, bookingColumns)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](set)); err != nil {
		return err
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.Search(`//*[contains(text(), "CONFIRMED")]`)),
		chromedp.Sleep(time.Second),
	)
	if err != nil {
		return fmt.Errorf("%s did not list a confirmed booking in time: %w", page, err)
	}
	return screenshot(ctx, out)
}

func screenshot(ctx context.Context, out string) error {
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return err
	}
	return os.WriteFile(out, png, 0o644)
}

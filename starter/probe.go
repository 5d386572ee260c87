package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// probe is the containers' health check: the images have no shell or curl.
func probe(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return errors.New("probe needs exactly one URL")
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args[0], nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", args[0], res.StatusCode)
	}
	return nil
}

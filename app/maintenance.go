package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/schema"
)

// The store's maintenance as processes of their own, each with its own
// login, so that neither login sits in the worker's environment (the
// worker dials receivers' URLs): starter migrate, one-shot, as the
// schema's owner; starter retention, on a schedule, as the retention role.

// Migrate brings the schema at url to this build's version, and returns
// the versions before and after; afterRollout also takes the steps that
// wait until no worker of the build before runs (schema.MigrateAfterRollout).
func Migrate(ctx context.Context, url string, afterRollout bool) (from, to int32, err error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, 0, fmt.Errorf("migrate: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if from, _, err = schema.Versions(ctx, conn); err != nil {
		return 0, 0, err
	}
	migrate := schema.Migrate
	if afterRollout {
		migrate = schema.MigrateAfterRollout
	}
	if err := migrate(ctx, conn); err != nil {
		return from, from, err
	}
	to, _, err = schema.Versions(ctx, conn)
	return from, to, err
}

// RetentionConfig is the retention process's settings.
type RetentionConfig struct {
	// DatabaseURL is the retention role's login: the only one that may
	// rewrite the event log.
	DatabaseURL string
	// BookingRetention and EventRetention are the worker's settings of
	// the same names.
	BookingRetention, EventRetention time.Duration
	// Every is how often a pass runs; zero runs one pass and returns.
	Every time.Duration
	// Limit bounds what one transaction retires.
	Limit int
}

// DefaultRetentionConfig is the worker's retention periods, a pass an hour.
func DefaultRetentionConfig() RetentionConfig {
	d := DefaultConfig()
	return RetentionConfig{BookingRetention: d.BookingRetention, EventRetention: d.EventRetention, Every: time.Hour, Limit: 1000}
}

// Validate reports every bad setting at once.
func (c RetentionConfig) Validate() error {
	var errs []error
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("retention needs the retention role's login: set -database-url or RETENTION_DATABASE_URL"))
	}
	if c.BookingRetention <= 0 || c.EventRetention <= 0 {
		errs = append(errs, fmt.Errorf("retention periods must be positive, got %s and %s", c.BookingRetention, c.EventRetention))
	}
	if c.Every < 0 || c.Limit <= 0 {
		errs = append(errs, fmt.Errorf("every must be 0 or more and limit positive, got %s and %d", c.Every, c.Limit))
	}
	return errors.Join(errs...)
}

// RunRetention applies the event log's and the bookings' retention as the
// retention role: passes until one finds nothing left, then again every
// cfg.Every until ctx ends (once, with Every zero). A login that may not
// rewrite the log is refused at start, not at the first due row.
func RunRetention(ctx context.Context, cfg RetentionConfig, logger *zap.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	pc, err := store.PoolConfig(cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("retention: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return fmt.Errorf("retention: connect: %w", err)
	}
	defer pool.Close()
	st := store.New(pool, store.Config{BookingRetention: cfg.BookingRetention, EventRetention: cfg.EventRetention})
	if may, err := st.MayRewriteEvents(ctx); err != nil || !may {
		return errors.Join(err, errors.New("retention: this login may not rewrite the event log: use the bookingsaga_retention role"))
	}
	for {
		total, err := retentionPass(ctx, st, cfg.Limit)
		if err != nil {
			return err
		}
		logger.Info("retention pass", zap.Int("retired", total))
		if cfg.Every == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(cfg.Every):
		}
	}
}

// retentionPass retires what is due, limit at a time, until none is left.
func retentionPass(ctx context.Context, st *store.Store, limit int) (int, error) {
	total := 0
	for {
		n, err := st.ApplyRetention(ctx, limit)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/bookingsaga/bookingsaga/internal/visibility"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/bookingsaga/bookingsaga/activities"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/accounts"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/metrics"
	"github.com/bookingsaga/bookingsaga/internal/speech"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/internal/zaplog"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/schema"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// Run connects everything, serves until ctx ends, then drains. An
// interrupt while it is still starting (Ctrl-C as the dev stack comes up)
// is a clean stop too: nothing was served yet.
func Run(ctx context.Context, cfg Config, logger *zap.Logger) error {
	return start(ctx, cfg, logger, metrics.New(logger), nil)
}

// start is Run on metrics m, which the dev stack's API shares; ready, if
// set, is called once the worker is about to poll.
func start(ctx context.Context, cfg Config, logger *zap.Logger, m *metrics.Metrics, ready func()) error {
	defer m.Close()
	serving := false
	err := run(ctx, cfg, logger, m, func() {
		serving = true
		if ready != nil {
			ready()
		}
	})
	// Only an interrupt before the worker served is a clean stop: a
	// failure while serving or draining is reported as one.
	if err != nil && ctx.Err() != nil && !serving {
		logger.Info("worker stopped cleanly", zap.String("while", "starting"), zap.NamedError("interrupted", err))
		return nil
	}
	return err
}

func run(ctx context.Context, cfg Config, logger *zap.Logger, m *metrics.Metrics, ready func()) error {
	pc, err := store.PoolConfig(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return fmt.Errorf("connect database: %w", err)
	}
	defer pool.Close()
	acts, err := workerActivities(ctx, cfg, pool, logger)
	if err != nil {
		return err
	}
	acts.Metrics = m.Scope()
	RegisterMetrics(m, cfg.Temporal.Namespace, cfg.TaskQueue)
	opts, err := cfg.Temporal.Options()
	if err != nil {
		return err
	}
	opts.Logger, opts.MetricsHandler = zaplog.New(logger), m.SDK()
	c, err := client.Dial(opts)
	if err != nil {
		return fmt.Errorf("connect temporal at %s: %w", cfg.Temporal.Address, err)
	}
	defer c.Close()
	stop, err := serveSides(ctx, cfg, sides{metrics: m, pool: pool, temporal: c, log: logger})
	defer stop()
	if err != nil {
		return err
	}
	acts.Temporal = c
	// Reconciliation sends a call Temporal never got as the API sent it:
	// sealed, to the same queue, with the sagas' default timings.
	acts.Resend = sagaclient.New(c, sagaclient.Options{TaskQueue: cfg.TaskQueue, Log: logger})
	if err := prepareNamespace(ctx, c, cfg, acts); err != nil {
		return err
	}
	w := worker.New(c, cfg.TaskQueue, worker.Options{WorkerStopTimeout: cfg.ShutdownTimeout,
		Interceptors: []interceptor.WorkerInterceptor{&retryCounter{scope: m.Scope()}}})
	Register(w, acts)
	logger.Info("worker started", zap.String("task_queue", cfg.TaskQueue), zap.String("namespace", cfg.Temporal.Namespace),
		zap.String("zone_rules", localtime.Version()))
	if ready != nil {
		ready()
	}
	if err := w.Run(stopOn(ctx)); err != nil {
		return fmt.Errorf("run worker: %w", err)
	}
	logger.Info("worker stopped cleanly")
	return nil
}

// workerActivities brings the schema up to date where this login owns it
// and builds the activities over pool.
func workerActivities(ctx context.Context, cfg Config, pool *pgxpool.Pool, logger *zap.Logger) (*activities.Activities, error) {
	if err := migrateOwn(ctx, pool); err != nil {
		return nil, err
	}
	acts, err := newActivities(ctx, cfg, pool)
	if err != nil {
		return nil, err
	}
	if err := acts.Store.CheckIsolation(ctx); err != nil {
		return nil, err
	}
	may, err := acts.Store.MayRewriteEvents(ctx)
	if err != nil {
		return nil, err
	}
	if acts.RetentionElsewhere = !may; acts.RetentionElsewhere {
		logger.Info("the event log's retention runs in its own process (starter retention): this login may not rewrite it")
	}
	if acts.Calendar == nil {
		logger.Warn("no calendar configured: bookings are not mirrored to a calendar")
	}
	return acts, nil
}

// prepareNamespace makes the namespace ready for the worker. A saga's
// first status write fails for good on a namespace without the search
// attributes, and reconciliation can't find stuck sagas: half-configured
// is worse than not running.
func prepareNamespace(ctx context.Context, c client.Client, cfg Config, acts *activities.Activities) error {
	if err := EnsureNamespace(ctx, c, cfg.Temporal.Namespace); err != nil {
		return err
	}
	if err := EnsureSearchAttributes(ctx, c, cfg.Temporal.Namespace); err != nil {
		return err
	}
	if err := EnsureSchedule(ctx, c, cfg); err != nil {
		return err
	}
	if _, err := FollowZoneRulesNow(ctx, c, cfg, acts.Store); err != nil {
		return err
	}
	if err := EnsureWebhooks(ctx, c, cfg.TaskQueue, acts.Store); err != nil {
		return err
	}
	// The default agency's accounts: the deployment's, or its own.
	set, err := acts.Accounts.For(ctx, accounts.Set{SMS: acts.SMS, Mail: acts.Mail})
	if err != nil {
		return err
	}
	if set.SMS != nil || set.Mail != nil {
		return activities.EnsureMessages(ctx, c, cfg.TaskQueue)
	}
	return nil
}

// stopOn turns ctx's end into the worker's interrupt channel.
func stopOn(ctx context.Context) <-chan any {
	ch := make(chan any)
	go func() {
		<-ctx.Done()
		close(ch)
	}()
	return ch
}

// migrateOwn brings the schema up to date over the worker's own login,
// when it is behind this build and that login owns it (a single-role
// deployment, the dev stack). Elsewhere migrations are a process of their
// own, starter migrate, as the schema's owner: the owner's login never
// sits in the worker's environment.
func migrateOwn(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	have, want, err := schema.Versions(ctx, conn.Conn())
	if err != nil || have >= want {
		return err
	}
	if err := schema.Migrate(ctx, conn.Conn()); err != nil {
		return fmt.Errorf("the schema is at version %d and this build needs %d; run 'starter migrate' as the schema's owner: %w", have, want, err)
	}
	return nil
}

// Register puts the saga and its activities on a worker.
func Register(r worker.Registry, acts *activities.Activities) {
	for _, w := range workflows.All() {
		r.RegisterWorkflow(w)
	}
	r.RegisterActivity(acts)
}

func storeConfig(cfg Config) store.Config {
	return store.Config{ContactRetention: cfg.ContactRetention, BookingRetention: cfg.BookingRetention, EventRetention: cfg.EventRetention}
}

func newActivities(ctx context.Context, cfg Config, pool *pgxpool.Pool) (*activities.Activities, error) {
	st := store.New(pool, storeConfig(cfg))
	set, err := cfg.Connect(ctx, false)
	if err != nil {
		return nil, err
	}
	acts := &activities.Activities{Store: st, Egress: cfg.Egress(), MirrorYield: cfg.MirrorYield, RecheckBudget: cfg.CalendarRecheck, Accounts: cfg.Accounts(st, false),
		Calendar: set.Calendar, CRM: set.CRM, SMS: set.SMS, Mail: set.Mail}
	acts.CRMLang, _ = speech.ParseLang(cfg.CRMLanguage) // checked by validate
	acts.Quiet, acts.PublicURL = booking.QuietHours{From: cfg.QuietFrom, To: cfg.QuietTo}, cfg.PublicURL
	acts.Texts = cfg.TextLimits()
	return acts, nil
}

// EnsureNamespace registers the namespace if the server lacks it; a
// server that won't (Temporal Cloud, a locked-down cluster) gets the one
// line that says how.
func EnsureNamespace(ctx context.Context, c client.Client, namespace string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
	var nf *serviceerror.NamespaceNotFound
	if !errors.As(err, &nf) {
		if err != nil {
			return fmt.Errorf("describe namespace %s: %w", namespace, err)
		}
		return nil
	}
	_, err = c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{Namespace: namespace,
		WorkflowExecutionRetentionPeriod: durationpb.New(7 * 24 * time.Hour)})
	var exists *serviceerror.NamespaceAlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("namespace %s does not exist and could not be created (%v); create it with: temporal operator namespace create --namespace %s",
			namespace, err, namespace)
	}
	return nil
}

// EnsureSearchAttributes registers the saga's custom search attributes that
// the namespace lacks; a server that refuses (Temporal Cloud needs them
// added through its own tooling) gets the one line that says how.
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("search attributes of namespace %s could not be read (%v); make sure they exist with: %s",
			namespace, err, createAttributesCommand(namespace, SearchAttributes()))
	}
	missing := map[string]enums.IndexedValueType{}
	for name, kind := range SearchAttributes() {
		if _, ok := have.GetCustomAttributes()[name]; !ok {
			missing[name] = kind
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: namespace, SearchAttributes: missing})
	if err != nil {
		return fmt.Errorf("search attributes missing in namespace %s and could not be added (%v); create them with: %s",
			namespace, err, createAttributesCommand(namespace, missing))
	}
	return nil
}

// createAttributesCommand is the temporal CLI line that creates missing.
func createAttributesCommand(namespace string, missing map[string]enums.IndexedValueType) string {
	names := slices.Sorted(maps.Keys(missing))
	cmd := "temporal operator search-attribute create --namespace " + namespace
	for _, name := range names {
		kind := strings.TrimPrefix(missing[name].String(), "INDEXED_VALUE_TYPE_")
		cmd += fmt.Sprintf(" --name %s --type %s", name, strings.ToUpper(kind[:1])+strings.ToLower(kind[1:]))
	}
	return cmd
}

func SearchAttributes() map[string]enums.IndexedValueType {
	return map[string]enums.IndexedValueType{
		visibility.AttrStatus.GetName():         enums.INDEXED_VALUE_TYPE_KEYWORD,
		visibility.AttrProperty.GetName():       enums.INDEXED_VALUE_TYPE_KEYWORD,
		visibility.AttrAgent.GetName():          enums.INDEXED_VALUE_TYPE_KEYWORD,
		visibility.AttrSlotStart.GetName():      enums.INDEXED_VALUE_TYPE_DATETIME,
		visibility.AttrCalendarSynced.GetName(): enums.INDEXED_VALUE_TYPE_BOOL,
		visibility.AttrCRMSynced.GetName():      enums.INDEXED_VALUE_TYPE_BOOL,
		visibility.AttrCallerNotified.GetName(): enums.INDEXED_VALUE_TYPE_BOOL,
		visibility.AttrReference.GetName():      enums.INDEXED_VALUE_TYPE_KEYWORD,
		visibility.AttrAgency.GetName():         enums.INDEXED_VALUE_TYPE_KEYWORD,
	}
}

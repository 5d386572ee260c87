package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/bookingsaga/bookingsaga/agency"
	"github.com/bookingsaga/bookingsaga/booking"
	"github.com/bookingsaga/bookingsaga/internal/localtime"
	"github.com/bookingsaga/bookingsaga/internal/store"
	"github.com/bookingsaga/bookingsaga/sagaclient"
	"github.com/bookingsaga/bookingsaga/workflows"
)

// reconcileRunLimit bounds a reconciliation run, all its pages together.
// A run always ends (its activities retry a bounded number of times); this
// only stops one that hangs. It was three intervals, which a large
// deployment's run outlasted, so that later pages and the CRM were never
// reached: a long run now delays the next (the schedule skips overlaps)
// instead of being cut and started over.
const reconcileRunLimit = 24 * time.Hour

// EnsureSchedule creates the reconciliation schedule, or brings an
// existing one's interval and action up to date. It keeps a pause an
// operator set, and never makes a second schedule.
func EnsureSchedule(ctx context.Context, c client.Client, cfg Config) error {
	spec := client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: cfg.ReconcileInterval}}}
	action := &client.ScheduleWorkflowAction{ID: booking.ReconcileRunID, Workflow: booking.ReconcileWorkflowName,
		TaskQueue: cfg.TaskQueue, Args: []any{workflows.ReconcileInput{}}, WorkflowExecutionTimeout: reconcileRunLimit}
	_, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{ID: booking.ReconcileScheduleID, Spec: spec, Action: action,
		// A run still going when the next is due means the backlog is large:
		// skip rather than pile up.
		Overlap: enums.SCHEDULE_OVERLAP_POLICY_SKIP})
	if err == nil || !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		if err != nil {
			return fmt.Errorf("create schedule %s: %w", booking.ReconcileScheduleID, err)
		}
		return nil
	}
	err = c.ScheduleClient().GetHandle(ctx, booking.ReconcileScheduleID).Update(ctx, client.ScheduleUpdateOptions{
		DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			s := in.Description.Schedule
			s.Spec, s.Action = &spec, action
			if s.Policy == nil {
				s.Policy = &client.SchedulePolicies{}
			}
			s.Policy.Overlap = enums.SCHEDULE_OVERLAP_POLICY_SKIP
			return &client.ScheduleUpdate{Schedule: &s}, nil
		}})
	if err != nil {
		return fmt.Errorf("update schedule %s: %w", booking.ReconcileScheduleID, err)
	}
	return nil
}

// FollowZoneRulesNow runs reconciliation now when a future booking waits
// to be checked under the zone rules this build carries (a deploy with a
// newer release): its first step moves such bookings, or flags them,
// before the mirrors are repaired. It reports whether it asked for a run.
func FollowZoneRulesNow(ctx context.Context, c client.Client, cfg Config, st *store.Store) (bool, error) {
	behind, err := st.ZoneRulesBehind(ctx)
	if err != nil || !behind {
		return false, err
	}
	if err := sagaclient.New(c, sagaclient.Options{TaskQueue: cfg.TaskQueue}).ReconcileNow(ctx); err != nil {
		return false, fmt.Errorf("reconcile for zone rules %s: %w", localtime.Version(), err)
	}
	return true, nil
}

// EnsureWebhooks starts the dispatcher of every agency's registered
// webhook endpoints that has none running: the API starts one when it
// registers an endpoint, and this brings back any that ended. The worker
// calls it at start.
func EnsureWebhooks(ctx context.Context, c client.Client, taskQueue string, st *store.Store) error {
	all, err := st.Agencies(ctx)
	if err != nil {
		return err
	}
	sc := sagaclient.New(c, sagaclient.Options{TaskQueue: taskQueue})
	for _, a := range all {
		actx := agency.With(ctx, a.Agency)
		eps, err := st.Endpoints(actx)
		if err != nil {
			return err
		}
		for _, ep := range eps {
			if err := sc.StartWebhooks(actx, ep.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

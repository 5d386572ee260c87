-- A reconciliation step that failed (DM4): the run goes on with the
-- others, and the step is listed in ops attention until a run gets it
-- through. One row per step, its first failure kept.
CREATE TABLE reconcile_failure (
    step   text PRIMARY KEY,
    error  text NOT NULL,
    since  timestamptz NOT NULL,
    last   timestamptz NOT NULL
);

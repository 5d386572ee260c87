// Package app is the composition root: each process is assembled here
// once, from the configuration its main builds. The worker (the store,
// the calendar and CRM mirrors, the Temporal client and worker, metrics,
// health, the reconciliation schedule), the agent edge (the REST API with
// the voice tools mounted on it, Edge and NewAPI), the codec server and,
// with -dev, the embedded stack. cmd-style packages (worker/, starter/)
// only parse flags and call it.
//
// Its own tests are unit tests of the wiring (configuration, layering,
// metrics, the reads' pool); the system tests are in app/systemtest, the
// dev stack in app/devstack and the fault suite's machinery in app/chaos.
package app

package booking

// The saga's contract with Temporal: every name by which Temporal knows
// the saga and its companions, and every visibility query that finds them,
// is defined here once; workflows, activities, the client, the API and the
// CLI all use these.

// Names the clients use. The workflow id of a booking is its request key.
const (
	BookingWorkflowName = "Booking"
	UpdateSelect        = "select"
	UpdateCommit        = "commit"
	UpdateCancel        = "cancel"
	UpdateReschedule    = "reschedule"
	QueryState          = "state"
	QueryReceipt        = "receipt"
	// QueryKeys lists every request key a conversation made: the keys its
	// voice tools may act on.
	QueryKeys         = "keys"
	SignalReplacement = "replacement-decided"
	// SignalCallerMessaged tells a saga how a message to its caller ended
	// (a MessageNotice), for the operator's view.
	SignalCallerMessaged = "caller-messaged"
	TaskQueue            = "bookingsaga"
)

// Workflow ids of the saga's companions start with these; a request key
// (a booking's workflow id) may start with none of them. The schedule's
// runs are named ReconcileRunID and a timestamp.
const (
	ConversationIDPrefix = "conversation:"
	CatalogIDPrefix      = "catalog:"
	ReconcileRunID       = "reconcile"
	// ReferencePrefix starts the reference a caller quotes, which the CLI
	// and the tools take in a key's place.
	ReferencePrefix = "BS-"
	// AnonymousPrefix starts the key retention gives a booking past its
	// period, in place of the one a caller's request carried.
	AnonymousPrefix = "anon-"
	// WebhooksIDPrefix and an endpoint's id name its dispatcher workflow.
	WebhooksIDPrefix = "webhooks:"
	// ReleaseGoneIDPrefix and a request key name the release of a
	// booking whose saga is gone.
	ReleaseGoneIDPrefix = "release-gone:"
	// WithdrawIDPrefix and a request key name the withdrawal of a key
	// whose booking call is still pending.
	WithdrawIDPrefix = "withdraw:"
	// AgencyIDPrefix starts the workflow id of every workflow of an
	// agency other than the default one ("agency:<id>:" and the id the
	// default agency would use), so that each agency has its own request
	// keys (agency.WorkflowID).
	AgencyIDPrefix = "agency:"
)

// OutcomeWorkflowName records how a viewing went and mirrors it to the
// CRM; OutcomeIDPrefix, the request key and the outcome name its run.
const (
	OutcomeWorkflowName = "Outcome"
	OutcomeIDPrefix     = "outcome:"
)

// ReleaseGoneWorkflowName cancels, in the store, a booking whose saga
// Temporal no longer has.
const ReleaseGoneWorkflowName = "ReleaseGone"

// WithdrawWorkflowName records, in the store, a caller's cancel of a key
// whose booking call is still pending and undecided.
const WithdrawWorkflowName = "Withdraw"

// MessagesWorkflowName sends the callers' messages; MessagesIDPrefix and
// the task queue name its one run per deployment.
const (
	MessagesWorkflowName = "CallerMessages"
	MessagesIDPrefix     = "caller-messages:"
)

// WebhooksWorkflowName is the dispatcher of one webhook endpoint.
const WebhooksWorkflowName = "Webhooks"

// Names of the intent-key workflow and its updates: one per
// conversation, id workflows.ConversationWorkflowID(conversationID).
const (
	ConversationWorkflowName = "Conversation"
	UpdateChoose             = "choose"
	// UpdateChooseToBook is choose for a booking about to be sent: the
	// key is remembered as booked until UpdateSettle says its outcome is
	// known, and while it is not, later choices are told (Outstanding).
	UpdateChooseToBook = "choose-to-book"
	UpdateSettle       = "settle"
	UpdateRetire       = "retire"
	// UpdateAdopt makes a booking of an earlier call this conversation's
	// own, once its caller proved it theirs (find_booking): it may then
	// cancel or reschedule it.
	UpdateAdopt = "adopt"
)

// Reconciliation names: the workflow the schedule runs, and the signal a
// stuck saga receives.
const (
	ReconcileWorkflowName = "Reconcile"
	// ReconcileScheduleID names the schedule; operators pause and trigger
	// it by this id in the Temporal UI or with `starter ops reconcile`.
	ReconcileScheduleID = "bookingsaga-reconcile"
	// SignalReconcile tells a saga what the store says about its key.
	SignalReconcile = "reconcile"
)

// SignedPlatforms are the voice platforms whose signing secrets an agency
// sets for its own tool URLs: Retell's account API key, a Vapi bearer
// credential's token and a Vapi HMAC credential's secret.
var SignedPlatforms = []string{"retell", "vapi", "vapi_hmac"}

// AccountKinds are the kinds of account an agency sets for its mirrors
// (PUT /v1/mirrors/{kind}): its calendars' (Google, Microsoft 365), its
// CRMs' (the generic one, HubSpot), its texts' and its e-mails'.
var AccountKinds = []string{ProviderGoogle, ProviderMicrosoft, "crm", "hubspot", "twilio", "smtp"}

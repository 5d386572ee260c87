package workflows

// All are the workflow functions a worker registers, each under its
// function's name. The replay of the kept histories registers the same
// list and asks for a kept history of each (replay_test.go), so a type
// added here is pinned from its first release.
func All() []any {
	return []any{Booking, Conversation, Reconcile, Webhooks, CallerMessages, ReleaseGone, Withdraw, Outcome, MirrorCRM}
}

package activities

// MirrorsWaiting is how many of a's mirror writes are yielding to commits
// now. A function, not a method: every exported method of Activities is
// registered as an activity.
func MirrorsWaiting(a *Activities) int {
	a.turns.mu.Lock()
	defer a.turns.mu.Unlock()
	return a.turns.waiting
}

// HoldCommits marks a commit in flight on a until the returned function
// is called, as Commit does while it runs.
func HoldCommits(a *Activities) (end func()) { return a.turns.begin() }

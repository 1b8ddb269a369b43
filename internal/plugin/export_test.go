package plugin

// WithoutDeadlines makes a runtime compile modules as they are and run
// events without deadlines, for tests that compare with and without.
func WithoutDeadlines(o Options) Options {
	o.noDeadlines = true
	return o
}

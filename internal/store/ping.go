package store

import (
	"context"
	"fmt"
)

// Ping reads the store's revision: the cheapest question that shows the
// database answers queries (not only that a pooled connection is open, as
// sql.DB.Ping may), so a readiness probe built on it sees an outage as
// the decisions do. The error names the store with its password hidden.
func (s *Store) Ping(ctx context.Context) error {
	var rev int64
	if err := s.db.QueryRowContext(ctx, "SELECT rev FROM tw_revision WHERE id = 1").Scan(&rev); err != nil {
		return s.scrub(fmt.Errorf("store %s: read the revision: %w", s.url, err))
	}
	return nil
}

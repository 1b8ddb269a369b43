-- Schema v1: portable SQL that SQLite and Postgres both run unchanged.
-- Times are BIGINT unix nanoseconds; ids are TEXT made in Go.
CREATE TABLE tw_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL);
CREATE TABLE tw_revision (id INTEGER PRIMARY KEY CHECK (id = 1), rev BIGINT NOT NULL);
INSERT INTO tw_revision (id, rev) VALUES (1, 0);
CREATE TABLE tw_grants (
  id TEXT PRIMARY KEY, app TEXT NOT NULL, server TEXT NOT NULL, connector TEXT NOT NULL,
  tool TEXT NOT NULL, hash TEXT NOT NULL,
  scope_kind TEXT NOT NULL, scope_name TEXT NOT NULL,
  args_digest TEXT NOT NULL, args_preview TEXT NOT NULL,
  granted_by TEXT NOT NULL, granted_at BIGINT NOT NULL,
  revoked_at BIGINT, revoked_by TEXT,
  rev BIGINT NOT NULL);
CREATE INDEX tw_grants_rev ON tw_grants (rev);
CREATE TABLE tw_sessions (id TEXT PRIMARY KEY, state TEXT NOT NULL, rev BIGINT NOT NULL, updated_at BIGINT NOT NULL);
CREATE TABLE tw_request_states (nonce TEXT PRIMARY KEY, expires_at BIGINT NOT NULL, parts TEXT NOT NULL);
CREATE TABLE tw_asks (
  id TEXT PRIMARY KEY, session TEXT NOT NULL, principal TEXT NOT NULL,
  ask TEXT NOT NULL,
  approvers TEXT NOT NULL,
  replica TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL,
  answer TEXT, answered_by TEXT, answered_groups TEXT, answered_at BIGINT, grant_scope TEXT, withdrawn_at BIGINT);
CREATE INDEX tw_asks_open ON tw_asks (answered_at, expires_at);
CREATE TABLE tw_audit (id TEXT PRIMARY KEY, at BIGINT NOT NULL, replica TEXT NOT NULL,
  session TEXT NOT NULL, event TEXT NOT NULL, record TEXT NOT NULL);
CREATE INDEX tw_audit_at ON tw_audit (at);

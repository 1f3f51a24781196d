// Package docstore keeps the documents of distributed asks in PostgreSQL,
// once each, by content hash: work items name a document by its hash, and
// every worker reads it from here. It lives in the same database as the
// dbos engine's records, in its own table, so that one URL is all a worker
// needs. A table, rather than a step's output, because a document is the
// input of many items and outlives any one of them.
package docstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNotFound is a hash with no document stored under it.
var ErrNotFound = errors.New("no document with that hash")

// schema is created when a store opens; IF NOT EXISTS makes two processes
// opening at once harmless (a lost race on the catalogue is retried once).
const schema = `CREATE TABLE IF NOT EXISTS baton_documents (
	hash text PRIMARY KEY,
	content bytea NOT NULL,
	stored_at timestamptz NOT NULL DEFAULT now()
)`

// Store is the documents table of one database.
type Store struct {
	pool *pgxpool.Pool
}

// Open connects to the database at url and creates the table when missing.
func Open(ctx context.Context, url string) (*Store, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("document store: %w", err)
	}
	if _, err = pool.Exec(ctx, schema); err != nil {
		// Two CREATE TABLE IF NOT EXISTS at once can still collide on
		// the catalogue's unique index; the second try sees the table.
		_, err = pool.Exec(ctx, schema)
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("document store: create its table: %w", err)
	}
	return &Store{pool: pool}, nil
}

// Put stores content under hash unless a document is stored there already.
func (s *Store) Put(ctx context.Context, hash string, content []byte) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO baton_documents (hash, content) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING`, hash, content)
	if err != nil {
		return fmt.Errorf("store document %s: %w", hash, err)
	}
	return nil
}

// Get returns the document stored under hash.
func (s *Store) Get(ctx context.Context, hash string) ([]byte, error) {
	var b []byte
	err := s.pool.QueryRow(ctx, `SELECT content FROM baton_documents WHERE hash = $1`, hash).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("document %s: %w", hash, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read document %s: %w", hash, err)
	}
	return b, nil
}

// Close closes the store's connections.
func (s *Store) Close() { s.pool.Close() }

package dbosengine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/baton-dev/baton/engine/quota"
)

// migrateLock is the advisory lock every baton process takes, in the
// system database, around DBOS's migrations: DBOS v1.8.0 serialises only its
// data-source migrations, and two processes creating its schema at once
// fail on each other's CREATE SCHEMA or version row.
const migrateLock int64 = 0x6261746f6e01 // "baton" and 1

// Migrate creates the system database when it does not exist and DBOS's
// schema in it, or brings the schema up to this DBOS version, and baton's
// own tables (schema baton): executor heartbeats and the shared token
// budget and pause (package quota). Any number of
// processes may call it at once: the database is created by one of them
// and the migrations run under an advisory lock, one process after the
// other (the later ones find nothing to do).
func Migrate(ctx context.Context, databaseURL string) error {
	conn, err := connectCreating(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if err := lock(ctx, conn); err != nil {
		return err
	}
	// The session's end frees the lock too, should unlocking fail.
	defer conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", migrateLock)
	if err := dbos.Migrate(ctx, databaseURL, dbos.WithMigrateLogger(quiet)); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := conn.Exec(ctx, executorsDDL); err != nil {
		return fmt.Errorf("migrate: baton's tables: %w", err)
	}
	if _, err := conn.Exec(ctx, quota.DDL); err != nil {
		return fmt.Errorf("migrate: the shared budget's tables: %w", err)
	}
	return nil
}

// lock takes the migration lock, trying every 100ms rather than waiting
// in pg_advisory_lock: a waiting statement holds a snapshot, and DBOS's
// migrations build indexes CONCURRENTLY, which wait for every snapshot in
// the database to end, so a waiter would deadlock the process it waits for.
func lock(ctx context.Context, conn *pgx.Conn) error {
	for {
		var got bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", migrateLock).Scan(&got); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
		if got {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("migrate: waiting for another process's migration: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// connectCreating connects to the database at databaseURL, creating it
// through the server's postgres database when it does not exist. Two
// processes creating it at once are fine: the loser's "already exists" is
// not an error when the database is there after it.
func connectCreating(ctx context.Context, databaseURL string) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err == nil {
		return conn, nil
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "3D000" { // invalid_catalog_name
		return nil, fmt.Errorf("connect to the database: %w", err)
	}
	cfg, perr := pgx.ParseConfig(databaseURL)
	if perr != nil {
		return nil, fmt.Errorf("database URL: %w", perr)
	}
	name := cfg.Database
	admin, aerr := maintenanceURL(databaseURL)
	if aerr != nil {
		return nil, aerr
	}
	ac, aerr := pgx.Connect(ctx, admin)
	if aerr != nil {
		return nil, fmt.Errorf("database %q does not exist, and the server's postgres database to create it from cannot be reached: %w", name, aerr)
	}
	_, cerr := ac.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	ac.Close(context.Background())
	conn, err = pgx.Connect(ctx, databaseURL)
	switch {
	case err == nil:
		// Made by this process or by another at the same moment (which
		// PostgreSQL reports as 42P04 or as a unique violation on
		// pg_database): either way it is there.
		return conn, nil
	case cerr != nil:
		return nil, fmt.Errorf("create database %q: %w", name, cerr)
	default:
		return nil, fmt.Errorf("connect to the database: %w", err)
	}
}

// maintenanceURL is databaseURL with the postgres database instead.
func maintenanceURL(databaseURL string) (string, error) {
	u, err := url.Parse(databaseURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", errors.New("the database does not exist, and only a postgres:// URL says how to reach the server to create it")
	}
	u.Path = "/postgres"
	u.RawPath = ""
	return u.String(), nil
}

package dbosengine

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/dbos-inc/dbos-transact-golang/dbos"

	"github.com/baton-dev/baton/internal/pgtest"
)

// TestMain is also the child process of the tests that need several
// processes: with BATON_TEST_MIGRATE set it migrates that database and
// exits (BATON_TEST_MIGRATE_RAW=1 uses DBOS's Migrate without baton's lock,
// to show the race the lock prevents).
func TestMain(m *testing.M) {
	if u := os.Getenv("BATON_TEST_MIGRATE"); u != "" {
		var err error
		if os.Getenv("BATON_TEST_MIGRATE_RAW") == "1" {
			err = dbos.Migrate(context.Background(), u, dbos.WithMigrateLogger(quiet))
		} else {
			err = Migrate(context.Background(), u)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "migrate:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	switch os.Getenv("BATON_TEST_CHILD") {
	case "1":
		os.Exit(child())
	case "fanout":
		os.Exit(fanoutChild())
	}
	pgtest.Main(m)
}

package dbosengine

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/baton-dev/baton/internal/pgtest"
)

// migrateAtOnce starts n processes that migrate url at the same moment and
// returns each one's error and output.
func migrateAtOnce(t *testing.T, url string, n int, raw bool) ([]error, []string) {
	t.Helper()
	cmds := make([]*exec.Cmd, n)
	outs := make([]*lockedBuf, n)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^$")
		cmds[i].Env = append(os.Environ(), "BATON_TEST_MIGRATE="+url)
		if raw {
			cmds[i].Env = append(cmds[i].Env, "BATON_TEST_MIGRATE_RAW=1")
		}
		outs[i] = &lockedBuf{}
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	errs := make([]error, n)
	texts := make([]string, n)
	for i, c := range cmds {
		errs[i] = c.Wait()
		texts[i] = outs[i].String()
	}
	return errs, texts
}

type lockedBuf struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// TestConcurrentMigrationsDoNotRace: four processes migrating a database
// that does not exist yet, at once, all succeed, and the schema is there
// once.
func TestConcurrentMigrationsDoNotRace(t *testing.T) {
	url := pgtest.NewDatabaseURL(t)
	errs, outs := migrateAtOnce(t, url, 4, false)
	for i, err := range errs {
		if err != nil {
			t.Errorf("migration %d: %v\n%s", i+1, err, outs[i])
		}
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM dbos.dbos_migrations").Scan(&n); err != nil {
		t.Fatalf("the schema's version table: %v", err)
	}
	if n != 1 {
		t.Errorf("%d version rows, want 1", n)
	}
}

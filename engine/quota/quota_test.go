package quota_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-dev/baton/engine/dbosengine"
	"github.com/baton-dev/baton/engine/quota"
	"github.com/baton-dev/baton/internal/pgtest"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/openai"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// migrated is a fresh database with baton's tables.
func migrated(t *testing.T) string {
	t.Helper()
	url := pgtest.Database(t)
	if err := dbosengine.Migrate(context.Background(), url); err != nil {
		t.Fatal(err)
	}
	return url
}

func open(t *testing.T, url string) *quota.Budget {
	t.Helper()
	b, err := quota.Open(context.Background(), url, "baton")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func dbNow(t *testing.T, url string) time.Time {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var now time.Time
	if err := conn.QueryRow(context.Background(), "SELECT clock_timestamp()").Scan(&now); err != nil {
		t.Fatal(err)
	}
	return now
}

// TestBudgetHoldsAcrossTwoPools: two budgets on their own connection pools
// (as two processes have), each charged by four goroutines at once. The
// tokens charged in any window of the period, over both, stay within the
// budget; both get some; and the budget is spent, not merely guarded.
func TestBudgetHoldsAcrossTwoPools(t *testing.T) {
	const limit = 1000
	period := time.Second
	run := 3 * time.Second
	url := migrated(t)
	a, b := open(t, url), open(t, url)
	if err := a.SetSize(context.Background(), limit, period); err != nil {
		t.Fatal(err)
	}
	type taken struct {
		at     time.Time
		tokens int
		pool   int
	}
	var mu sync.Mutex
	var all []taken
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), run)
	defer cancel()
	for i, bud := range []*quota.Budget{a, b, a, b, a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				n := 100 + 50*((i+k)%5) // 100 to 300 tokens
				c, err := bud.Take(ctx, n)
				if err != nil {
					return // the run is over
				}
				if c.Tokens() != n {
					t.Errorf("charged %d, want %d", c.Tokens(), n)
				}
				mu.Lock()
				all = append(all, taken{c.At, c.Tokens(), i % 2})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Slice(all, func(i, j int) bool { return all[i].at.Before(all[j].at) })
	byPool := [2]int{}
	total, worst := 0, 0
	for i, c := range all {
		byPool[c.pool]++
		total += c.tokens
		// The window (c.at - period, c.at], as the budget counts it.
		sum := 0
		for j := i; j >= 0 && all[j].at.After(c.at.Add(-period)); j-- {
			sum += all[j].tokens
		}
		worst = max(worst, sum)
		if sum > limit {
			t.Errorf("%d tokens charged in the window ending %v, budget %d", sum, c.at, limit)
		}
	}
	if byPool[0] == 0 || byPool[1] == 0 {
		t.Errorf("charges per pool %v, want both to get some", byPool)
	}
	// Over a run of three periods at least two budgets' worth goes out
	// (the first window's and at least one more): a budget that let
	// nothing through after its first window would fail here.
	if total < 2*limit {
		t.Errorf("%d tokens charged in %v, want at least %d", total, run, 2*limit)
	}
	t.Logf("%d charges (%v per pool), %d tokens in %v (%.2f budgets per period), fullest window %d of %d",
		len(all), byPool, total, run, float64(total)/float64(limit)/run.Seconds(), worst, limit)
}

// TestPauseHoldsEveryPool: a pause recorded through one pool holds a
// charge through another until it has passed, by the database's clock.
func TestPauseHoldsEveryPool(t *testing.T) {
	url := migrated(t)
	a, b := open(t, url), open(t, url)
	if err := a.SetSize(context.Background(), 1000, time.Second); err != nil {
		t.Fatal(err)
	}
	const pause = 700 * time.Millisecond
	before := dbNow(t, url)
	if err := a.Pause(context.Background(), pause); err != nil {
		t.Fatal(err)
	}
	st, err := b.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.PausedFor <= 0 || st.PausedFor > pause {
		t.Errorf("read a pause of %v, want within (0, %v]", st.PausedFor, pause)
	}
	c, err := b.Take(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if c.At.Before(before.Add(pause)) {
		t.Errorf("charged %v after the pause began, before its %v had passed", c.At.Sub(before), pause)
	}
	// A shorter pause does not cut a longer one short.
	if err := a.Pause(context.Background(), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := b.Pause(context.Background(), 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if st, _ := a.Read(context.Background()); st.PausedFor < time.Second {
		t.Errorf("pause left %v after a shorter one, want the longer kept", st.PausedFor)
	}
	// A wait the deadline cannot cover fails at once, with no charge.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := b.Take(ctx, 10); err == nil {
		t.Error("a take under a deadline shorter than the pause succeeded")
	}
}

// TestSizeIsKeptSettledAndLifted: a budget opened again without a size
// keeps the stored one; a settled charge counts what was spent; size 0
// lifts the limit.
func TestSizeIsKeptSettledAndLifted(t *testing.T) {
	url := migrated(t)
	a := open(t, url)
	if err := a.SetSize(context.Background(), 500, time.Minute); err != nil {
		t.Fatal(err)
	}
	b := open(t, url) // a second process, without --tpm
	st, err := b.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.TokensPerPeriod != 500 || st.Period != time.Minute {
		t.Fatalf("after a second open: %d per %v, want 500 per 1m0s kept", st.TokensPerPeriod, st.Period)
	}
	c, err := b.Take(context.Background(), 400)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Settle(context.Background(), c, 150); err != nil {
		t.Fatal(err)
	}
	// 150 spent of 500: 350 fit at once, where 400 charged would have
	// left only 100 for a minute.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := a.Take(ctx, 350); err != nil {
		t.Fatalf("350 tokens after a charge settled at 150 of 500: %v", err)
	}
	if st, _ := a.Read(context.Background()); st.Charged != 500 {
		t.Errorf("charged %d in the window, want 500", st.Charged)
	}
	if _, err := a.Take(ctx, 1); err == nil {
		t.Error("a token beyond the budget within the minute was charged")
	}
	if err := a.SetSize(context.Background(), 0, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Take(context.Background(), 10_000); err != nil {
		t.Fatalf("after the limit was lifted: %v", err)
	}
}

// TestModelPausesAllOnA429: through the real OpenAI SDK, a 429 with
// retry-after answered to one model pauses the other: its next call reaches
// the server only after the retry-after has passed. The 429 is not charged.
func TestModelPausesAllOnA429(t *testing.T) {
	const retryAfter = 800 * time.Millisecond
	url := migrated(t)
	a, b := open(t, url), open(t, url)
	if err := a.SetSize(context.Background(), 100_000, time.Minute); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var arrivals []time.Time
	s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		arrivals = append(arrivals, time.Now())
		if len(arrivals) == 1 {
			return llmtest.RateLimit(retryAfter)
		}
		return llmtest.Text("ok")
	}))
	model := func(bud *quota.Budget) llm.Model {
		m, err := openai.New(openai.Config{APIKey: "k", BaseURL: s.OpenAIBaseURL(), Model: "gpt-4o-mini"})
		if err != nil {
			t.Fatal(err)
		}
		return quota.NewModel(m, bud, quota.Options{})
	}
	ma, mb := model(a), model(b)
	req := &llm.Request{Model: "gpt-4o-mini", MaxTokens: 50, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hello"}}}
	if _, err := ma.Generate(context.Background(), req); err == nil {
		t.Fatal("the first call was not refused")
	}
	if st, _ := a.Read(context.Background()); st.Charged != 0 || st.PausedFor <= 0 {
		t.Errorf("after the 429: %d charged, pause %v; want 0 charged and a pause", st.Charged, st.PausedFor)
	}
	if _, err := mb.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	gap := arrivals[1].Sub(arrivals[0])
	mu.Unlock()
	if gap < retryAfter-20*time.Millisecond { // the 429 is answered just after its arrival
		t.Errorf("the other model's call arrived %v after the 429, before its retry-after %v", gap, retryAfter)
	}
	if st, _ := b.Read(context.Background()); st.Charged <= 0 {
		t.Errorf("the answered call left %d charged", st.Charged)
	}
	t.Logf("the other model's call arrived %v after the 429 (retry-after %v)", gap.Round(time.Millisecond), retryAfter)
}

// TestALargeCallIsNotStarved: while one pool keeps charging small calls, a
// call of nearly the whole budget from another pool is served in its turn:
// it is charged within two periods of asking, not held off for as long as
// small calls keep fitting.
func TestALargeCallIsNotStarved(t *testing.T) {
	const limit = 1000
	period := time.Second
	url := migrated(t)
	a, b := open(t, url), open(t, url)
	if err := a.SetSize(context.Background(), limit, period); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				a.Take(ctx, 100)
			}
		}()
	}
	time.Sleep(500 * time.Millisecond) // the small calls fill the window
	asked := dbNow(t, url)
	c, err := b.Take(context.Background(), 900)
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if wait := c.At.Sub(asked); wait > 2*period {
		t.Errorf("the large call was charged %v after it asked, want within %v", wait, 2*period)
	} else {
		t.Logf("the large call was charged %v after it asked", wait.Round(time.Millisecond))
	}
}

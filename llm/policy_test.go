package llm_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/anthropic"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/openai"
)

// client builds the real provider client for protocol p against s.
func client(t *testing.T, s *llmtest.Server, p llmtest.Protocol) llm.Model {
	t.Helper()
	switch p {
	case llmtest.Anthropic:
		m, err := anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: s.AnthropicBaseURL(), Model: "claude-test"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	default:
		m, err := openai.New(openai.Config{APIKey: "test-key", BaseURL: s.OpenAIBaseURL(), Model: "gpt-test"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

var protocols = []llmtest.Protocol{llmtest.Anthropic, llmtest.OpenAI}

func request(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}, MaxTokens: 64}
}

// sleeps records the waits the retry policy asked for without spending them.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	for _, p := range protocols {
		t.Run(string(p), func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Sequence(llmtest.RateLimit(time.Second), llmtest.Text("ok")))
			var sl sleeps
			var retried []int
			m := llm.WithRetry(client(t, s, p), llm.RetryPolicy{
				BaseDelay: time.Millisecond, Sleep: sl.sleep,
				OnRetry: func(attempt int, _ time.Duration, err error) {
					retried = append(retried, attempt)
					var pe *llm.ProviderError
					if !errors.As(err, &pe) || pe.StatusCode != http.StatusTooManyRequests {
						t.Errorf("OnRetry got %v, want a 429 ProviderError", err)
					}
				},
			})
			resp, err := m.Generate(context.Background(), request("hi"))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if resp.Text != "ok" || resp.Attempts != 2 {
				t.Errorf("got text %q after %d attempts, want \"ok\" after 2", resp.Text, resp.Attempts)
			}
			if w := sl.waits(); len(w) != 1 || w[0] < time.Second {
				t.Errorf("waits %v, want one wait of at least the 1s retry-after", w)
			}
			if len(retried) != 1 || retried[0] != 1 {
				t.Errorf("OnRetry attempts %v, want [1]", retried)
			}
			if n := s.Count(); n != 2 {
				t.Errorf("server saw %d requests, want 2", n)
			}
		})
	}
}

func TestRetryStatuses(t *testing.T) {
	tests := []struct {
		status    int
		retryable bool
	}{
		{http.StatusInternalServerError, true},
		{http.StatusServiceUnavailable, true},
		{529, true},
		{http.StatusRequestTimeout, true},
		{http.StatusConflict, true},
		{http.StatusTooManyRequests, true},
		{http.StatusBadRequest, false},
		{http.StatusUnauthorized, false},
		{http.StatusNotFound, false},
	}
	const maxAttempts = 3
	for _, p := range protocols {
		for _, tt := range tests {
			t.Run(string(p)+"/"+http.StatusText(tt.status), func(t *testing.T) {
				s := llmtest.NewServer(t, llmtest.Always(llmtest.Fail(tt.status, "", "scripted failure")))
				var sl sleeps
				m := llm.WithRetry(client(t, s, p), llm.RetryPolicy{MaxAttempts: maxAttempts, Sleep: sl.sleep})
				_, err := m.Generate(context.Background(), request("hi"))
				if err == nil {
					t.Fatal("Generate succeeded against a failing server")
				}
				var pe *llm.ProviderError
				if !errors.As(err, &pe) || pe.StatusCode != tt.status {
					t.Fatalf("error %v is not a ProviderError with status %d", err, tt.status)
				}
				want := 1
				if tt.retryable {
					want = maxAttempts
					if !strings.Contains(err.Error(), "3 attempts") {
						t.Errorf("error %q does not say how many attempts were made", err)
					}
				}
				if n := s.Count(); n != want {
					t.Errorf("server saw %d requests, want %d", n, want)
				}
				if n := len(sl.waits()); n != want-1 {
					t.Errorf("slept %d times, want %d", n, want-1)
				}
			})
		}
	}
}

func TestRetryAfterTooLongGivesUp(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Always(llmtest.RateLimit(10*time.Minute)))
	var sl sleeps
	m := llm.WithRetry(client(t, s, llmtest.Anthropic), llm.RetryPolicy{MaxRetryAfter: time.Minute, Sleep: sl.sleep})
	_, err := m.Generate(context.Background(), request("hi"))
	if !errors.Is(err, llm.ErrRetryAfterTooLong) {
		t.Fatalf("error %v, want ErrRetryAfterTooLong", err)
	}
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.RetryAfter != 10*time.Minute {
		t.Errorf("error %v does not carry the provider's 10m retry-after", err)
	}
	if s.Count() != 1 || len(sl.waits()) != 0 {
		t.Errorf("server saw %d requests and baton slept %v; want 1 request and no sleep", s.Count(), sl.waits())
	}
}

func TestRetryCancelDuringBackoff(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Always(llmtest.RateLimit(time.Minute)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The real sleep: the test proves that a minute-long wait ends as soon
	// as the context does.
	m := llm.WithRetry(client(t, s, llmtest.OpenAI), llm.RetryPolicy{
		OnRetry: func(int, time.Duration, error) { time.AfterFunc(10*time.Millisecond, cancel) },
	})
	start := time.Now()
	_, err := m.Generate(ctx, request("hi"))
	if el := time.Since(start); el > 30*time.Second { // a hang, against the minute's wait
		t.Fatalf("Generate returned %s after cancellation", el)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.StatusCode != http.StatusTooManyRequests {
		t.Errorf("error %v lost the provider error that caused the wait", err)
	}
	if n := s.Count(); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
}

func TestRetryNeverRetriesCancelledCall(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Always(llmtest.Slow(time.Minute, "late")))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.OnRequest(func(llmtest.RecordedRequest) { cancel() })
	var sl sleeps
	m := llm.WithRetry(client(t, s, llmtest.Anthropic), llm.RetryPolicy{Sleep: sl.sleep})
	_, err := m.Generate(ctx, request("hi"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if len(sl.waits()) != 0 {
		t.Errorf("a cancelled call was retried (waits %v)", sl.waits())
	}
}

// inFlight answers after a short pause and records the most requests the
// server was handling at once.
type inFlight struct {
	cur, peak atomic.Int64
}

func (f *inFlight) rule(pause time.Duration) llmtest.Rule {
	return llmtest.Func(func(llmtest.RecordedRequest) llmtest.Reply {
		n := f.cur.Add(1)
		for {
			p := f.peak.Load()
			if n <= p || f.peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(pause)
		f.cur.Add(-1)
		return llmtest.Text("ok")
	})
}

func TestLimitConcurrency(t *testing.T) {
	tests := []struct {
		name        string
		concurrency int
		wantMax     int64 // the peak may not exceed this
		wantMin     int64 // and must reach this, proving the test can see overlap
	}{
		{"capped at 3", 3, 3, 2},
		{"capped at 1", 1, 1, 1},
		{"unlimited", 0, 12, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f inFlight
			s := llmtest.NewServer(t, f.rule(30*time.Millisecond))
			m := llm.WithLimits(client(t, s, llmtest.OpenAI), llm.Limits{Concurrency: tt.concurrency})
			var wg sync.WaitGroup
			errs := make(chan error, 12)
			for range 12 {
				wg.Go(func() {
					if _, err := m.Generate(context.Background(), request("hi")); err != nil {
						errs <- err
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("Generate: %v", err)
			}
			if p := f.peak.Load(); p > tt.wantMax || p < tt.wantMin {
				t.Errorf("peak in-flight requests %d, want between %d and %d", p, tt.wantMin, tt.wantMax)
			}
		})
	}
}

// arrivals records when the server received each request.
type arrivals struct {
	mu sync.Mutex
	at []time.Time
}

func (a *arrivals) record(llmtest.RecordedRequest) {
	a.mu.Lock()
	a.at = append(a.at, time.Now())
	a.mu.Unlock()
}

// since is how long after start the last request arrived. A busy machine
// can only make that later, never earlier than the pacing allows; the span
// between the first and last arrivals could shrink when the first is late.
func (a *arrivals) since(start time.Time) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	var last time.Duration
	for _, t := range a.at {
		last = max(last, t.Sub(start))
	}
	return last
}

func TestLimitPacing(t *testing.T) {
	fixed := func(n int) func(*llm.Request) int { return func(*llm.Request) int { return n } }
	tests := []struct {
		name     string
		limits   llm.Limits
		requests int
		minSpan  time.Duration // the last request may not arrive sooner after the calls start
		// deadline, when set, is each request's: a request held back
		// longer is refused at once, saying it would pass the deadline.
		deadline time.Duration
	}{
		// One request every 200ms: the fourth goes out 600ms after the
		// first is let through, at the earliest.
		{"requests per minute", llm.Limits{RequestsPerMinute: 300}, 4, 590 * time.Millisecond, 0},
		// A bucket of 60000 tokens refilling at 1000/s: two requests of
		// 30300 need 600 tokens more than the bucket holds, 600ms of refill.
		{"tokens per minute", llm.Limits{TokensPerMinute: 60000, Estimate: fixed(30300)}, 2, 590 * time.Millisecond, 0},
		// Requests inside the bucket are not held back. The bucket holds
		// the four and refills at 10 tokens/s, so holding back any of them
		// would take fifteen seconds: past its ten-second deadline, which
		// refuses it at once. No clock is read.
		{"tokens within budget", llm.Limits{TokensPerMinute: 600, Estimate: fixed(150)}, 4, 0, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("ok")))
			var a arrivals
			s.OnRequest(a.record)
			m := llm.WithLimits(client(t, s, llmtest.Anthropic), tt.limits)
			start := time.Now()
			var wg sync.WaitGroup
			for range tt.requests {
				wg.Go(func() {
					ctx := context.Background()
					if tt.deadline > 0 {
						var cancel context.CancelFunc
						ctx, cancel = context.WithTimeout(ctx, tt.deadline)
						defer cancel()
					}
					if _, err := m.Generate(ctx, request("hi")); err != nil {
						t.Errorf("Generate: %v", err)
					}
				})
			}
			wg.Wait()
			if sp := a.since(start); sp < tt.minSpan {
				t.Errorf("the last request arrived %s after the calls started, want at least %s", sp, tt.minSpan)
			}
		})
	}
}

func TestLimitOversizedRequestDoesNotDeadlock(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("ok")))
	m := llm.WithLimits(client(t, s, llmtest.OpenAI), llm.Limits{
		TokensPerMinute: 1000, Estimate: func(*llm.Request) int { return 5000 }})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := m.Generate(ctx, request("big")); err != nil {
		t.Fatalf("an oversized request on a full bucket: %v", err)
	}
	// It emptied the bucket: the next call needs a minute of refill, more
	// than its 30 s deadline, and says so at once instead of waiting the
	// deadline out (which would end in the other error, after 30 s).
	short, cancel2 := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel2()
	_, err := m.Generate(short, request("next"))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "would pass the deadline") {
		t.Errorf("error %v, want context.DeadlineExceeded, said before the deadline", err)
	}
	if short.Err() != nil {
		t.Errorf("returned only once the deadline had passed")
	}
	if n := s.Count(); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
}

func TestLimitCancelWhileWaitingForSlot(t *testing.T) {
	release := make(chan struct{})
	s := llmtest.NewServer(t, llmtest.Func(func(llmtest.RecordedRequest) llmtest.Reply {
		<-release
		return llmtest.Text("ok")
	}))
	m := llm.WithLimits(client(t, s, llmtest.Anthropic), llm.Limits{Concurrency: 1})
	started := make(chan struct{})
	var once sync.Once
	s.OnRequest(func(llmtest.RecordedRequest) { once.Do(func() { close(started) }) })
	done := make(chan error, 1)
	go func() {
		_, err := m.Generate(context.Background(), request("first"))
		done <- err
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := m.Generate(ctx, request("second"))
	close(release)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting for a slot: %v, want context.DeadlineExceeded", err)
	}
	if err := <-done; err != nil {
		t.Errorf("first call: %v", err)
	}
	if n := s.Count(); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
}

// TestRetryReleasesSlotWhileWaiting proves the documented composition: with
// one slot, a call sleeping on a backoff does not stop another call.
func TestRetryReleasesSlotWhileWaiting(t *testing.T) {
	s := llmtest.NewServer(t,
		llmtest.Sequence(llmtest.RateLimit(time.Second), llmtest.Text("first")).WhenContains("first"),
		llmtest.Always(llmtest.Text("second")))
	var m *llm.Retrying
	var during error
	m = llm.WithRetry(llm.WithLimits(client(t, s, llmtest.OpenAI), llm.Limits{Concurrency: 1}), llm.RetryPolicy{
		Sleep: func(ctx context.Context, _ time.Duration) error {
			// Were the slot held, this call would wait for ever: the
			// deadline turns that into an error, generous for a busy machine.
			c, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			resp, err := m.Generate(c, request("second"))
			if err == nil && resp.Text != "second" {
				err = errors.New("wrong answer " + resp.Text)
			}
			during = err
			return nil
		},
	})
	resp, err := m.Generate(context.Background(), request("first"))
	if err != nil || resp.Text != "first" || resp.Attempts != 2 {
		t.Fatalf("first call: %v, %+v", err, resp)
	}
	if during != nil {
		t.Errorf("a call made while the first slept on its backoff failed: %v", during)
	}
}

// A request the provider refused with 429 is charged to the client's token
// bucket once, not again for its retry: the bucket holds one request's
// estimate, so a second charge would wait a minute for the refill, far past
// the deadline, and fail at once ("would pass the deadline").
func TestTokenBucketChargesARefusedRequestOnce(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Sequence(llmtest.RateLimit(0), llmtest.Text("ok")))
	var sl sleeps
	m := llm.WithRetry(llm.WithLimits(client(t, s, llmtest.Anthropic),
		llm.Limits{TokensPerMinute: 1000, Estimate: func(*llm.Request) int { return 1000 }}),
		llm.RetryPolicy{MaxAttempts: 3, Sleep: sl.sleep})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := m.Generate(ctx, request("hi"))
	if err != nil {
		t.Fatalf("the retry after a 429 was charged again: %v", err)
	}
	if resp.Attempts != 2 || len(s.Requests()) != 2 {
		t.Errorf("attempts %d, requests %d; want 2 and 2", resp.Attempts, len(s.Requests()))
	}
}

package llm

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"
)

func TestBackoffCap(t *testing.T) {
	tests := []struct {
		name    string
		p       RetryPolicy
		attempt int
		want    time.Duration
	}{
		{"defaults first", RetryPolicy{}, 1, 500 * time.Millisecond},
		{"defaults second", RetryPolicy{}, 2, time.Second},
		{"defaults fourth", RetryPolicy{}, 4, 4 * time.Second},
		{"defaults capped", RetryPolicy{}, 8, 30 * time.Second},
		{"huge attempt does not overflow", RetryPolicy{}, 200, 30 * time.Second},
		{"custom", RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: 250 * time.Millisecond}, 2, 200 * time.Millisecond},
		{"custom capped", RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: 250 * time.Millisecond}, 3, 250 * time.Millisecond},
		{"max below base is raised to base", RetryPolicy{BaseDelay: time.Second, MaxDelay: time.Millisecond}, 3, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.p.withDefaults()
			if got := p.backoffCap(tt.attempt); got != tt.want {
				t.Errorf("backoffCap(%d) = %s, want %s", tt.attempt, got, tt.want)
			}
		})
	}
}

func TestWaitJitterBounds(t *testing.T) {
	p := RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}.withDefaults()
	r := rand.New(rand.NewPCG(1, 2))
	for attempt := 1; attempt <= 6; attempt++ {
		c := p.backoffCap(attempt)
		var lo, hi time.Duration = c, 0
		for range 2000 {
			d := p.wait(attempt, 0, r.Int64N)
			if d < 0 || d > c {
				t.Fatalf("attempt %d: wait %s outside [0, %s]", attempt, d, c)
			}
			lo, hi = min(lo, d), max(hi, d)
		}
		// Full jitter must actually spread: a constant wait would defeat it.
		if lo > c/10 || hi < c*9/10 {
			t.Errorf("attempt %d: waits spread only over [%s, %s] of [0, %s]", attempt, lo, hi, c)
		}
	}
}

func TestWaitRetryAfterWins(t *testing.T) {
	p := RetryPolicy{BaseDelay: time.Second, MaxDelay: 10 * time.Second}.withDefaults()
	top := func(n int64) int64 { return n - 1 }
	zero := func(int64) int64 { return 0 }
	tests := []struct {
		name       string
		attempt    int
		retryAfter time.Duration
		jitter     func(int64) int64
		want       time.Duration
	}{
		{"retry-after longer than backoff", 1, 3 * time.Second, top, 3 * time.Second},
		{"backoff longer than retry-after", 4, 3 * time.Second, top, 8 * time.Second},
		{"jitter at zero still waits retry-after", 4, 2 * time.Second, zero, 2 * time.Second},
		{"no retry-after, zero jitter", 1, 0, zero, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.wait(tt.attempt, tt.retryAfter, tt.jitter); got != tt.want {
				t.Errorf("wait = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestSleepCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := sleepCtx(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("sleepCtx on cancelled ctx = %v, want context.Canceled", err)
	}
	if el := time.Since(start); el > 30*time.Second { // a hang, against the hour's sleep
		t.Fatalf("sleepCtx took %s after cancel", el)
	}
	if err := sleepCtx(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("sleepCtx = %v", err)
	}
}

func TestParseRetryAfterBounds(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const forever = time.Duration(math.MaxInt64)
	tests := []struct {
		name, value string
		want        time.Duration
	}{
		{"retry-after", "2", 2 * time.Second},
		{"retry-after", "0.5", 500 * time.Millisecond},
		{"retry-after", "-3", 0},
		{"retry-after", "99999999999", forever},
		{"retry-after", "9223372036.9", forever},
		{"retry-after", "+Inf", forever},
		{"retry-after", "-Inf", forever},
		{"retry-after", "NaN", forever},
		{"retry-after", "soon", 0},
		{"retry-after", "Thu, 01 Jan 2026 00:00:30 GMT", 30 * time.Second},
		{"retry-after", "Wed, 31 Dec 2025 23:59:00 GMT", 0},
		{"retry-after-ms", "250", 250 * time.Millisecond},
		{"retry-after-ms", "-1", 0},
		{"retry-after-ms", "1e300", forever},
		{"retry-after-ms", "Inf", forever},
	}
	for _, tt := range tests {
		h := http.Header{}
		h.Set(tt.name, tt.value)
		if got := ParseRetryAfter(h, now); got != tt.want {
			t.Errorf("%s: %s = %s, want %s", tt.name, tt.value, got, tt.want)
		}
	}
}

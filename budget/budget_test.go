package budget

import (
	"errors"
	"testing"

	"github.com/baton-dev/baton/llm"
)

func TestNewValidates(t *testing.T) {
	for _, f := range []float64{0, 1, -0.1, 1.5} {
		if _, err := New(1000, f); !errors.Is(err, ErrBadFraction) {
			t.Errorf("New(1000, %v) = %v, want ErrBadFraction", f, err)
		}
	}
	if _, err := New(0, 0.5); err == nil {
		t.Error("a zero window was accepted")
	}
	b, err := New(200_000, DefaultFraction)
	if err != nil || b.Threshold() != 130_000 {
		t.Fatalf("threshold = %d, %v", b.Threshold(), err)
	}
}

func TestContextIsInputPlusCache(t *testing.T) {
	u := llm.Usage{InputTokens: 100, OutputTokens: 999, CacheReadInputTokens: 50, CacheCreationInputTokens: 25}
	if got := ContextTokens(u); got != 175 {
		t.Fatalf("ContextTokens = %d, want 175 (output does not count)", got)
	}
}

func TestProjectionUsesLargestTurn(t *testing.T) {
	b, _ := New(1000, 0.65)
	s := b.NewSession()
	for _, n := range []int64{300, 500, 400} {
		s.Observe(llm.Usage{InputTokens: n})
	}
	if s.Largest() != 500 || s.Turns() != 3 {
		t.Fatalf("largest %d turns %d", s.Largest(), s.Turns())
	}
	cases := []struct {
		expect int
		reset  bool
	}{
		{0, false},
		{149, false}, // 649 < 650
		{150, true},  // reaches the threshold exactly
		{-10, false},
	}
	for _, tc := range cases {
		d := s.AtBoundary(tc.expect)
		if d.Reset != tc.reset {
			t.Errorf("AtBoundary(%d) = %+v, want reset %v", tc.expect, d, tc.reset)
		}
		if d.Reset && d.Reason != ReasonBoundary {
			t.Errorf("reason = %q", d.Reason)
		}
		if d.Threshold != 650 || d.Window != 1000 {
			t.Errorf("decision carries threshold %d window %d", d.Threshold, d.Window)
		}
	}
}

func TestTwoMissesInAPhaseForceAReset(t *testing.T) {
	b, _ := New(1000, 0.5)
	s := b.NewSession()
	s.Observe(llm.Usage{InputTokens: 600})
	if d := s.MidPhase(0); !d.Reset || d.Reason != ReasonThreshold {
		t.Fatalf("MidPhase = %+v", d)
	}
	if s.Miss() {
		t.Fatal("the first miss forced a reset")
	}
	if !s.Miss() {
		t.Fatal("the second miss in a row did not force a reset")
	}
	if d := s.Forced(0); !d.Reset || d.Reason != ReasonForced {
		t.Fatalf("Forced = %+v", d)
	}
	s.PhaseChanged()
	if s.Misses() != 0 || s.Miss() {
		t.Fatal("misses carried over into the next phase")
	}
}

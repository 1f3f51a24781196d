package tokens

import "testing"

func TestCountKnownStrings(t *testing.T) {
	c, err := New(Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	// Reference counts from the cl100k_base encoding.
	cases := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"tiktoken is great!", 6},
	}
	for _, tc := range cases {
		if got := c.Count(tc.in); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestCountInvalidUTF8DoesNotFail(t *testing.T) {
	if n := Count("ok \xff\xfe bytes"); n <= 0 {
		t.Fatalf("Count of invalid UTF-8 = %d, want > 0", n)
	}
}

func TestWindow(t *testing.T) {
	cases := []struct {
		model    string
		override int
		want     int
		known    bool
	}{
		{"claude-sonnet-4-5", 0, 200_000, true},
		{"gpt-4o-mini", 0, 128_000, true},
		{"gpt-4", 0, 8_192, true},
		{"llama3.1:8b", 0, 128_000, true},
		{"mystery-model", 0, DefaultWindow, false},
		{"mystery-model", 32_000, 32_000, true},
	}
	for _, tc := range cases {
		got, known := Window(tc.model, tc.override)
		if got != tc.want || known != tc.known {
			t.Errorf("Window(%q, %d) = %d, %v; want %d, %v", tc.model, tc.override, got, known, tc.want, tc.known)
		}
	}
}

func TestCalibration(t *testing.T) {
	var c Calibration
	if got := c.Adjust(100); got != 100 {
		t.Fatalf("Adjust with no observations = %d, want 100", got)
	}
	c.Observe(100, 110)
	c.Observe(300, 330)
	c.Observe(50, 0) // a failed call reports nothing and must not skew the ratio
	s := c.Summary()
	if s.Calls != 2 || s.Counted != 400 || s.Reported != 440 {
		t.Fatalf("Summary = %+v", s)
	}
	if s.Ratio < 1.0999 || s.Ratio > 1.1001 {
		t.Fatalf("Ratio = %v, want 1.1", s.Ratio)
	}
	if got := c.Adjust(1000); got != 1100 {
		t.Fatalf("Adjust(1000) = %d, want 1100", got)
	}
}

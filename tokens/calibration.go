package tokens

import "sync"

// Calibration relates local counts to what a provider reports for the same
// prompts. Providers tokenize with their own vocabularies, so a local count
// is off by a model-specific factor; the ratio of the sums over a run is that
// factor, measured rather than assumed. It is safe for concurrent use.
type Calibration struct {
	mu       sync.Mutex
	counted  int64
	reported int64
	calls    int
}

// Observe adds one call: the local count of its prompt and the prompt
// tokens the provider reported (input plus cache reads and writes). Calls
// with nothing reported (failed calls) are ignored.
func (c *Calibration) Observe(counted, reported int64) {
	if counted <= 0 || reported <= 0 {
		return
	}
	c.mu.Lock()
	c.counted += counted
	c.reported += reported
	c.calls++
	c.mu.Unlock()
}

// CalibrationSummary is the state of a Calibration, for run records.
type CalibrationSummary struct {
	Calls    int   `json:"calls"`
	Counted  int64 `json:"counted_tokens"`
	Reported int64 `json:"reported_tokens"`
	// Ratio is Reported/Counted: multiply a local count by it to estimate
	// what this provider will bill. 0 when nothing was observed.
	Ratio float64 `json:"ratio"`
}

// Summary returns the totals observed so far.
func (c *Calibration) Summary() CalibrationSummary {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := CalibrationSummary{Calls: c.calls, Counted: c.counted, Reported: c.reported}
	if c.counted > 0 {
		s.Ratio = float64(c.reported) / float64(c.counted)
	}
	return s
}

// Adjust scales a local count by the observed ratio; with no observations
// it returns n unchanged.
func (c *Calibration) Adjust(n int) int {
	s := c.Summary()
	if s.Ratio == 0 {
		return n
	}
	return int(float64(n)*s.Ratio + 0.5)
}

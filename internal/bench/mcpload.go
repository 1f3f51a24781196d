package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/mcpserver"
)

// The load benchmark of `baton mcp --http`: many hosts cutting sections at
// once from one server, each host a real SDK client with its own session
// and connection pool, over a loopback listener, through the same handler
// (token check, origin and Host checks, Streamable HTTP) the command serves.

// mcpLoadP99 is the p99 latency bound of a slice call under load. One call
// alone takes 2 to 50 ms here (it reads and parses up to 420 KB), and 16
// callers on two cores queue about eight deep: p99 was 0.3 s on a quiet run
// and 0.75 s with the machine's two cores shared by four other jobs. A call
// held past 2 s is one that waited on something (a timeout, a retry, a
// reconnect) or whose work grew tenfold or more.
const mcpLoadP99 = 2 * time.Second

// mcpCallTimeout ends a call that has stalled.
const mcpCallTimeout = 30 * time.Second

// mcpLoadToken is the bearer token of the benchmark's server, so that the
// token check is part of what is timed.
const mcpLoadToken = "bench-token"

// mcpCall is one slice a host asks for: a subtask's intended sections of its
// document, and the evidence sentences the cut must hold.
type mcpCall struct {
	doc      string
	sections []string
	evidence []string
}

// mcpLoad is a running server over a root holding the corpus.
type mcpLoad struct {
	url   string
	calls []mcpCall
	stop  func()
}

// startMCPLoad writes the corpus into a temporary root and serves it on
// 127.0.0.1:0 until stop is called.
func startMCPLoad(tasks []*Task) (*mcpLoad, error) {
	dir, err := os.MkdirTemp("", "baton-bench-mcp-")
	if err != nil {
		return nil, err
	}
	l := &mcpLoad{}
	for _, t := range tasks {
		if err := os.WriteFile(filepath.Join(dir, t.File), []byte(t.Text), 0o600); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		for i, secs := range t.Intended {
			if len(secs) > 0 {
				l.calls = append(l.calls, mcpCall{doc: t.File, sections: secs, evidence: t.Evidence[i]})
			}
		}
	}
	s, err := mcpserver.New(mcpserver.Config{Root: dir, Version: "bench"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- s.ListenAndServe(ctx, "127.0.0.1:0", mcpserver.HTTPOptions{Token: mcpLoadToken}, func(url string) { ready <- url })
	}()
	l.stop = func() {
		cancel()
		<-done
		s.Close()
		os.RemoveAll(dir)
	}
	select {
	case l.url = <-ready:
		return l, nil
	case err := <-done:
		s.Close()
		os.RemoveAll(dir)
		cancel()
		return nil, fmt.Errorf("serving the corpus over http: %w", err)
	}
}

// bearerTransport sends the token on every request of one client.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// connect opens n client sessions, each with its own connection pool as
// separate host processes would have.
func (l *mcpLoad) connect(ctx context.Context, n int) ([]*mcp.ClientSession, error) {
	var out []*mcp.ClientSession
	for range n {
		tr := &mcp.StreamableClientTransport{Endpoint: l.url, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearerTransport{mcpLoadToken, http.DefaultTransport.(*http.Transport).Clone()}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			closeAll(out)
			return nil, fmt.Errorf("connecting client %d: %w", len(out)+1, err)
		}
		out = append(out, cs)
	}
	return out, nil
}

func closeAll(css []*mcp.ClientSession) {
	for _, cs := range css {
		cs.Close()
	}
}

// slice makes call c and checks the answer: every section matched, no
// fallback, nothing spilled (one subtask's sections are well under the
// result bound) and every evidence sentence in the cut. A wrong answer is
// an error.
func (l *mcpLoad) slice(ctx context.Context, cs *mcp.ClientSession, c mcpCall) error {
	// A stalled call is an error, not a hung benchmark.
	ctx, cancel := context.WithTimeout(ctx, mcpCallTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slice", Arguments: map[string]any{"document": c.doc, "sections": c.sections}})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("slice %s %v: a tool error", c.doc, c.sections)
	}
	data, _ := json.Marshal(res.StructuredContent)
	var out mcpserver.SliceOut
	if err := json.Unmarshal(data, &out); err != nil {
		return fmt.Errorf("slice %s: %w", c.doc, err)
	}
	if out.Fallback || len(out.Matched) != len(c.sections) {
		return fmt.Errorf("slice %s %v: %d of %d sections matched (fallback %v)", c.doc, c.sections, len(out.Matched), len(c.sections), out.Fallback)
	}
	if out.Spilled != nil {
		return fmt.Errorf("slice %s %v: spilled (%d bytes), not expected of one subtask's sections", c.doc, c.sections, out.Spilled.Bytes)
	}
	for _, e := range c.evidence {
		if !strings.Contains(out.Text, e) {
			return fmt.Errorf("slice %s %v: evidence %.40q missing from the cut", c.doc, c.sections, e)
		}
	}
	return nil
}

// mcpLoadResult is one load level's figures.
type mcpLoadResult struct {
	clients, calls, errors int
	firstErr               string
	latencies              []time.Duration // sorted
	elapsed                time.Duration
}

func (r mcpLoadResult) quantile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[min(len(r.latencies)-1, int(q*float64(len(r.latencies))))]
}

func (r mcpLoadResult) perSecond() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.calls) / r.elapsed.Seconds()
}

// run makes n calls spread over the sessions, each session one caller
// taking the next call when its last one is answered.
func (l *mcpLoad) run(ctx context.Context, sessions []*mcp.ClientSession, n int) mcpLoadResult {
	next := make(chan mcpCall)
	go func() {
		defer close(next)
		for i := range n {
			next <- l.calls[i%len(l.calls)]
		}
	}()
	var (
		mu  sync.Mutex
		res = mcpLoadResult{clients: len(sessions), calls: n}
		wg  sync.WaitGroup
	)
	start := time.Now()
	for _, cs := range sessions {
		wg.Go(func() {
			for c := range next {
				t0 := time.Now()
				err := l.slice(ctx, cs, c)
				d := time.Since(t0)
				mu.Lock()
				res.latencies = append(res.latencies, d)
				if err != nil {
					res.errors++
					if res.firstErr == "" {
						res.firstErr = err.Error()
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	sort.Slice(res.latencies, func(i, j int) bool { return res.latencies[i] < res.latencies[j] })
	return res
}

// RunMCPLoad measures slice calls over Streamable HTTP: first one client
// calling in turn (the latency of a call alone), then 16 clients at once.
func RunMCPLoad(ctx context.Context, tasks []*Task, opts Options) (Section, error) {
	calls, concurrency := 200, 16
	if opts.Quick {
		calls = 100
	}
	l, err := startMCPLoad(tasks)
	if err != nil {
		return Section{}, err
	}
	defer l.stop()
	sessions, err := l.connect(ctx, concurrency)
	if err != nil {
		return Section{}, err
	}
	defer closeAll(sessions)
	// One pass over every call warms the page cache and the SDK's schema
	// caches, so that the first timed calls are not the only cold ones.
	if warm := l.run(ctx, sessions[:1], len(l.calls)); warm.errors > 0 {
		return Section{}, fmt.Errorf("warm-up: %d errors, the first: %s", warm.errors, warm.firstErr)
	}
	var results []mcpLoadResult
	for _, c := range []int{1, concurrency} {
		opts.logf("mcp load: %d calls from %d clients", calls, c)
		results = append(results, l.run(ctx, sessions[:c], calls))
		if err := ctx.Err(); err != nil {
			return Section{}, err
		}
	}
	return mcpLoadSection(results, len(l.calls), len(tasks)), nil
}

func mcpLoadSection(results []mcpLoadResult, distinct, docs int) Section {
	tbl := Table{Header: []string{"clients", "calls", "errors", "p50", "p99", "max", "calls/s"}}
	for _, r := range results {
		tbl.Rows = append(tbl.Rows, []string{itoa(r.clients), itoa(r.calls), itoa(r.errors),
			ms1(r.quantile(0.50)), ms1(r.quantile(0.99)), ms1(r.quantile(1)), fmt.Sprintf("%.0f", r.perSecond())})
	}
	load := results[len(results)-1]
	errs := 0
	var first string
	for _, r := range results {
		errs += r.errors
		if first == "" {
			first = r.firstErr
		}
	}
	s := Section{
		Title: "MCP over HTTP: slice calls under load",
		Intro: fmt.Sprintf("`baton mcp --http`'s handler (bearer token, origin and Host checks, Streamable HTTP from the official Go SDK) on a loopback listener, "+
			"called by real SDK clients, each with its own session and connection pool. Each call cuts one subtask's intended sections out of its corpus document "+
			"(%d distinct calls over %d documents of 22–420 KB, taken in turn), and is checked: every section matched, no fallback, every evidence sentence in the cut. "+
			"Latency is timed in the client, from the call to its checked answer.", distinct, docs),
		Tables: []Table{tbl},
		Notes: []string{
			"On two cores, 16 clients cannot go faster than one: their row shows calls queueing, not a parallel speed-up, and calls/s is the server and the clients together on one machine. " +
				"For the same reason the bound would not show calls serialised behind one lock: with a mutex put around the slice tool for a check, the figures were the same.",
		},
	}
	s.Targets = append(s.Targets, Target{
		Name: "errors under load", Want: "0", Got: itoa(errs), Met: errs == 0, Why: first,
		Fail: "a transport error, a tool error or a wrong cut (a section unmatched, a fallback, a spill, evidence missing) in any call counts",
	})
	p99 := load.quantile(0.99)
	s.Targets = append(s.Targets, Target{
		Name: fmt.Sprintf("p99 latency, %d clients", load.clients), Want: fmt.Sprintf("≤ %v", mcpLoadP99), Got: ms1(p99), Met: p99 <= mcpLoadP99 && len(load.latencies) > 0,
		Why:  fmt.Sprintf("the slowest 1%% of calls took over %s", ms1(mcpLoadP99)),
		Fail: "missed if a call stalls (waits on a timeout, a retry or a reconnect, or on a connection pool held by event streams) or its work grows tenfold (a document read and parsed far slower than now)",
	})
	return s
}

// ms1 is a latency to a tenth of a millisecond (fanout.go's ms rounds to one).
func ms1(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

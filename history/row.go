package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/internal/yamlsafe"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/pricing"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/workflow"
)

// Kinds of run.
const (
	KindAsk = "ask"
	KindRun = "run"
)

// Statuses a run row can have besides the ask record's own (ok, partial,
// failed, dry_run): a workflow run whose last step stopped, or that has
// not ended.
const (
	StatusInterrupted = "interrupted"
	StatusUnfinished  = "unfinished"
)

// Run is one row of the history. Its JSON names are what `baton runs list
// --json` prints, a contract: fields are only ever added.
type Run struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Status string `json:"status"`
	// Title is the task of an ask, the workflow's name of a run.
	Title  string `json:"title"`
	Answer string `json:"answer,omitempty"`
	Error  string `json:"error,omitempty"`
	// Skills are the skills a workflow run's steps ran, in order of first
	// use; searched like an answer.
	Skills []string `json:"skills,omitempty"`

	Provider         string `json:"provider"`
	Model            string `json:"model"`
	InputTokens      int64  `json:"input_tokens"`
	OutputTokens     int64  `json:"output_tokens"`
	CacheReadTokens  int64  `json:"cache_read_tokens"`
	CacheWriteTokens int64  `json:"cache_write_tokens"`
	// NaiveSavings and SingleCallSavings are the record's savings ratios
	// against its two baselines (every sub-agent given the whole context;
	// one call with it); nil where the record has none (a run, a dry run).
	NaiveSavings      *float64 `json:"naive_savings_ratio"`
	SingleCallSavings *float64 `json:"single_call_savings_ratio"`
	// ContinuousSessionInputTokens and ContinuousSessionSavings are a
	// workflow run's modelled baseline (runlog.ContinuousSession): the
	// input one session that drops nothing would have sent, and the share
	// of it the run did not send; zero and nil for an ask, or a run
	// without a paid call of known context.
	ContinuousSessionInputTokens int64    `json:"continuous_session_input_tokens,omitempty"`
	ContinuousSessionSavings     *float64 `json:"continuous_session_savings_ratio"`
	// CostUSD is nil when a model has no price.
	CostUSD    *float64  `json:"cost_usd"`
	DurationMS int64     `json:"duration_ms"`
	Dir        string    `json:"dir"`
	Record     string    `json:"record"`
	StartedAt  time.Time `json:"started_at"`
}

// FromRecord makes the row of an ask record saved at path.
func FromRecord(rec *orchestrate.Record, path string) (Run, error) {
	if rec.ID == "" {
		return Run{}, fmt.Errorf("run record %s has no id", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Run{}, err
	}
	r := Run{
		ID: rec.ID, Kind: KindAsk, Status: rec.Status, Title: rec.Task, Answer: rec.Answer, Error: rec.Error,
		Provider: rec.Provider, Model: rec.Model,
		InputTokens: rec.Usage.Total.InputTokens, OutputTokens: rec.Usage.Total.OutputTokens,
		CacheReadTokens: rec.Usage.Total.CacheReadInputTokens, CacheWriteTokens: rec.Usage.Total.CacheCreationInputTokens,
		SingleCallSavings: rec.Accounting.SingleCallSavingsRatio,
		CostUSD:           rec.CostUSD, DurationMS: rec.DurationMS,
		Dir: workDir(filepath.Dir(abs)), Record: abs, StartedAt: rec.StartedAt.UTC(),
	}
	if r.Status == "" {
		// Records from before status was written.
		switch {
		case rec.DryRun:
			r.Status = orchestrate.RunDryRun
		case rec.Error != "" && rec.Answer == "":
			r.Status = orchestrate.RunFailed
		case rec.Error != "":
			r.Status = orchestrate.RunPartial
		default:
			r.Status = orchestrate.RunOK
		}
	}
	if rec.Accounting.NaiveInputTokens > 0 {
		v := rec.Accounting.SavingsRatio
		r.NaiveSavings = &v
	}
	return r, nil
}

// ReadRecord reads an ask record file.
func ReadRecord(path string) (*orchestrate.Record, error) {
	data, err := readBounded(path, maxRecord+1)
	if err != nil {
		return nil, err
	}
	if len(data) > maxRecord {
		return nil, fmt.Errorf("run record %s: larger than %d MiB", path, maxRecord>>20)
	}
	var rec orchestrate.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("run record %s: %w", path, err)
	}
	if rec.ID == "" || rec.StartedAt.IsZero() {
		return nil, fmt.Errorf("run record %s: %w", path, errNotRecord)
	}
	return &rec, nil
}

var errNotRecord = errors.New("not a baton ask record")

// maxRecord bounds what an import reads of one .json file: a folder of
// records may hold anything, and a record is far smaller.
const maxRecord = 256 << 20

// workDir is the folder a run was made in, given the folder of its
// records: the parent of .baton/runs, or the records' folder itself when
// --runs-dir put them elsewhere.
func workDir(runsDir string) string {
	if ws, ok := batondir.WorkspaceOfRuns(runsDir); ok {
		return ws
	}
	return runsDir
}

// FromRunDir makes the row of a workflow run from its folder
// (<workspace>/.baton/runs/<id>), read from the run log alone so that a
// rebuild gives the row the run's own hook gave. Tokens sum the model_call
// events (what was paid, replayed calls not counted again); cost prices
// them with pricing.Default; the continuous-session baseline is
// modelled from the same events.
func FromRunDir(dir string) (Run, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Run{}, err
	}
	logPath := filepath.Join(abs, batondir.RunLogName)
	events, _, err := runlog.Read(logPath) // a torn last line is a run killed mid-write; the rest stands
	if err != nil {
		return Run{}, err
	}
	if len(events) == 0 {
		return Run{}, fmt.Errorf("run log %s has no events", logPath)
	}
	id := filepath.Base(abs)
	ws := workDir(filepath.Dir(abs))
	r := Run{ID: id, Kind: KindRun, Status: StatusUnfinished, Dir: ws, Record: logPath, StartedAt: events[0].Time.UTC()}
	prices := pricing.Default()
	priced := true
	var cost float64
	var models []string
	var last time.Time
	var own []runlog.Event
	for _, e := range events {
		if e.Run != id {
			continue
		}
		own = append(own, e)
		if e.Time.After(last) {
			last = e.Time
		}
		switch e.Type {
		case runlog.ModelCall:
			// A call a resumed step answered from its journal was paid
			// when it was made; logs from before "replayed" was written
			// say so in the note, with the usage repeated.
			if e.Usage == nil || e.Replayed || e.Note == replayedNote {
				continue
			}
			u := llm.Usage{InputTokens: int64(e.Usage.InputTokens), OutputTokens: int64(e.Usage.OutputTokens),
				CacheReadInputTokens: int64(e.Usage.CacheReadTokens), CacheCreationInputTokens: int64(e.Usage.CacheWriteTokens)}
			r.InputTokens += u.InputTokens
			r.OutputTokens += u.OutputTokens
			r.CacheReadTokens += u.CacheReadInputTokens
			r.CacheWriteTokens += u.CacheCreationInputTokens
			if e.Model != "" && !contains(models, e.Model) {
				models = append(models, e.Model)
			}
			// An unpriced model (an --agent-cmd step, whose usage baton
			// does not know, among them) leaves the run without a cost
			// rather than with a low one.
			if c, ok := prices.Cost("", e.Model, u); ok {
				cost += c
			} else {
				priced = false
			}
		case runlog.StepEnd:
			// The last step's end says how the run stands: a failed or
			// interrupted one stops it until a resume.
			switch e.Status {
			case "ok":
				r.Status, r.Error = StatusUnfinished, ""
			case StatusInterrupted, orchestrate.RunFailed:
				r.Status, r.Error = e.Status, e.Note
			}
			if e.Skill != "" && !contains(r.Skills, e.Skill) {
				r.Skills = append(r.Skills, e.Skill)
			}
		case runlog.RunEnd:
			r.Status = e.Status
			if r.Status == "" || r.Status == "done" {
				r.Status = orchestrate.RunOK
			}
		}
	}
	if c := runlog.ContinuousSession(own); c.InputTokens > 0 {
		ratio, _ := c.SavingsRatio()
		r.ContinuousSessionInputTokens, r.ContinuousSessionSavings = int64(c.InputTokens), &ratio
	}
	r.Model = strings.Join(models, ",")
	if priced && len(models) > 0 {
		r.CostUSD = &cost
	}
	r.DurationMS = last.Sub(events[0].Time).Milliseconds()
	r.Title = workflowName(ws, id)
	return r, nil
}

// replayedNote is the note the runner puts on a model_call answered from
// the step journal.
const replayedNote = "answered from the step journal"

// workflowName names the workflow a run of workspace ws ran: the file
// .baton/current.json names while it describes this run, else baton.yaml;
// the workflow's name, or the file's when it does not parse.
func workflowName(ws, id string) string {
	file := "baton.yaml"
	if data, err := os.ReadFile(batondir.At(ws).Current()); err == nil {
		var info struct{ ID, Workflow string }
		// current.json may have been written by an agent: only a bare
		// file name is taken from it, never a path.
		if json.Unmarshal(data, &info) == nil && info.ID == id && info.Workflow != "" && info.Workflow == filepath.Base(info.Workflow) {
			file = info.Workflow
		}
	}
	// Only the name is wanted: a workflow file that no longer validates
	// still names its runs.
	data, err := readBounded(filepath.Join(ws, file), workflow.MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return file + " (gone)"
	}
	var wf struct {
		Name string `yaml:"name"`
	}
	if err != nil || yamlsafe.Unmarshal(data, &wf) != nil || strings.TrimSpace(wf.Name) == "" {
		return file
	}
	return strings.TrimSpace(wf.Name)
}

func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

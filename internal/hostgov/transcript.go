package hostgov

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/baton-dev/baton/tokens"
)

// MaxTranscriptRead bounds how much of a transcript a hook reads: the end
// of it, where the current context is. A session's transcript grows for as
// long as it lives and a hook has seconds.
const MaxTranscriptRead = 8 << 20

// maxLineRead bounds one transcript line; a longer one (a huge tool
// result) is skipped, not read into memory.
const maxLineRead = 2 << 20

// Transcript is what a hook learns from the end of a host's session
// transcript (Claude Code's JSON Lines file).
type Transcript struct {
	Path string
	// Truncated is true when only the end of the file was read.
	Truncated bool
	// Model is the model of the last assistant message.
	Model string
	// UsageTokens is the context of the last assistant message as the
	// provider reported it (input + cache read + cache write), 0 when no
	// message since the last compaction reports usage.
	UsageTokens int
	// CountedTokens is a count of the text since the last compaction, for
	// a transcript without usage.
	CountedTokens int
	// Requests are the user's prompts, oldest first.
	Requests []Line
	// Files are the files the session wrote or edited, in order of first
	// write, as the tool calls named them.
	Files []Line
	// Todos is the todo list of the last TodoWrite call.
	Todos []Todo
	// LastSummary is the last assistant text.
	LastSummary Line
	// LastCompact is the time of the last compaction boundary; zero when
	// none is in what was read. Started is the first time seen.
	LastCompact time.Time
	Started     time.Time
	// Compactions counts the compaction boundaries read.
	Compactions int
	// Window is the host's own figure for the model's window, where the
	// transcript gives one (Codex's token counts do).
	Window int
}

// Line is a piece of text and the transcript line it came from (1-based
// within what was read; with Truncated, counted from the read's start).
type Line struct {
	Text string
	Line int
}

// Todo is one item of the agent's todo list.
type Todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
	Line    int    `json:"-"`
}

// ContextTokens is the session's current context: the provider's figure
// when there is one, else the count.
func (t *Transcript) ContextTokens() int {
	if t.UsageTokens > 0 {
		return t.UsageTokens
	}
	return t.CountedTokens
}

// transcriptLine is the part of a Claude Code transcript line baton reads.
type transcriptLine struct {
	Type      string    `json:"type"`
	Subtype   string    `json:"subtype"`
	Timestamp time.Time `json:"timestamp"`
	IsMeta    bool      `json:"isMeta"`
	Summary   bool      `json:"isCompactSummary"`
	Sidechain bool      `json:"isSidechain"`
	// Payload is a Codex rollout line's body.
	Payload json.RawMessage `json:"payload"`
	Message *struct {
		Role    string          `json:"role"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
		Usage   *struct {
			Input      int `json:"input_tokens"`
			CacheRead  int `json:"cache_read_input_tokens"`
			CacheWrite int `json:"cache_creation_input_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

type block struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// ReadTranscript reads the end of the transcript at path, at most limit
// bytes (MaxTranscriptRead when limit <= 0).
func ReadTranscript(path string, limit int64) (*Transcript, error) {
	if limit <= 0 {
		limit = MaxTranscriptRead
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("transcript %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("transcript %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("transcript %s: not a regular file", path)
	}
	t := &Transcript{Path: path}
	start := int64(0)
	if st.Size() > limit {
		start, t.Truncated = st.Size()-limit, true
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return nil, fmt.Errorf("transcript %s: %w", path, err)
	}
	br := bufio.NewReaderSize(io.LimitReader(f, limit), 64<<10)
	if t.Truncated {
		// The read starts mid-line: drop the partial one.
		if _, err := skipLine(br); err != nil {
			return t, nil
		}
	}
	var since strings.Builder // text since the last compaction, for counting
	for n := 1; ; n++ {
		line, err := readLine(br)
		if len(line) > 0 {
			t.add(line, n, &since)
		}
		if err != nil {
			break
		}
	}
	if t.UsageTokens == 0 {
		t.CountedTokens = countBounded(since.String())
	}
	return t, nil
}

func (t *Transcript) add(raw []byte, n int, since *strings.Builder) {
	var l transcriptLine
	if json.Unmarshal(raw, &l) != nil {
		return
	}
	if !l.Timestamp.IsZero() && t.Started.IsZero() {
		t.Started = l.Timestamp
	}
	if len(l.Payload) > 0 || l.Type == "compacted" {
		t.addCodex(l, n, since)
		return
	}
	if l.Type == "system" && l.Subtype == "compact_boundary" {
		t.LastCompact, t.Compactions = l.Timestamp, t.Compactions+1
		t.UsageTokens = 0
		since.Reset()
		return
	}
	if l.Message == nil || l.Sidechain || (l.Type != "user" && l.Type != "assistant") {
		return
	}
	m := l.Message
	text, blocks := contentOf(m.Content)
	since.WriteString(text)
	for _, b := range blocks {
		since.WriteString(string(b.Input))
	}
	switch l.Type {
	case "user":
		if !l.IsMeta && !l.Summary && text != "" && !strings.HasPrefix(text, "<") {
			t.Requests = append(t.Requests, Line{Text: text, Line: n})
		}
	case "assistant":
		if m.Model != "" && m.Model != "<synthetic>" {
			t.Model = m.Model
		}
		if u := m.Usage; u != nil && u.Input+u.CacheRead+u.CacheWrite > 0 {
			t.UsageTokens = u.Input + u.CacheRead + u.CacheWrite
		}
		if strings.TrimSpace(text) != "" {
			t.LastSummary = Line{Text: text, Line: n}
		}
		for _, b := range blocks {
			t.toolUse(b, n)
		}
	}
}

// writeTools are the tools whose input names a file the session wrote.
var writeTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true}

func (t *Transcript) toolUse(b block, n int) {
	if b.Type != "tool_use" {
		return
	}
	switch {
	case writeTools[b.Name]:
		var in struct {
			FilePath     string `json:"file_path"`
			NotebookPath string `json:"notebook_path"`
		}
		if json.Unmarshal(b.Input, &in) != nil {
			return
		}
		p := in.FilePath
		if p == "" {
			p = in.NotebookPath
		}
		if p == "" {
			return
		}
		for _, f := range t.Files {
			if f.Text == p {
				return
			}
		}
		t.Files = append(t.Files, Line{Text: p, Line: n})
	case b.Name == "TodoWrite":
		var in struct {
			Todos []Todo `json:"todos"`
		}
		if json.Unmarshal(b.Input, &in) != nil {
			return
		}
		for i := range in.Todos {
			in.Todos[i].Line = n
		}
		t.Todos = in.Todos
	}
}

// contentOf returns a message's text (a string content, or its text
// blocks joined) and its blocks.
func contentOf(raw json.RawMessage) (string, []block) {
	if len(raw) == 0 {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var blocks []block
	if json.Unmarshal(raw, &blocks) != nil {
		return "", nil
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n"), blocks
}

// readLine returns the next line without its newline; a line longer than
// maxLineRead comes back empty (it is skipped whole).
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			if len(buf)+len(chunk) > maxLineRead {
				long, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if long {
			return nil, err
		}
		return bytes.TrimRight(buf, "\r\n"), err
	}
}

func skipLine(br *bufio.Reader) (int, error) {
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return n, err
	}
}

// maxCounted bounds the text counted exactly; past it the count of its
// first part is scaled to the whole, since a hook has seconds.
const maxCounted = 1 << 20

func countBounded(s string) int {
	if len(s) <= maxCounted {
		return tokens.Count(s)
	}
	head := s[:maxCounted]
	return int(float64(tokens.Count(head)) * float64(len(s)) / float64(len(head)))
}

// codexPayload is the part of a Codex rollout line's payload baton reads.
type codexPayload struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Model   string `json:"model"`
	Name    string `json:"name"`
	Input   string `json:"input"`
	Args    string `json:"arguments"`
	Info    *struct {
		Last struct {
			Input int `json:"input_tokens"`
		} `json:"last_token_usage"`
		Window int `json:"model_context_window"`
	} `json:"info"`
}

// patchFile finds the files an apply_patch call adds or changes.
var patchFile = regexp.MustCompile(`(?m)^\*\*\* (?:Add|Update) File: (.+)$`)

// addCodex reads one line of a Codex rollout: its token counts, the
// user's messages, the files apply_patch wrote, and compactions.
func (t *Transcript) addCodex(l transcriptLine, n int, since *strings.Builder) {
	if l.Type == "compacted" {
		t.LastCompact, t.Compactions = l.Timestamp, t.Compactions+1
		t.UsageTokens = 0
		since.Reset()
		return
	}
	var p codexPayload
	if json.Unmarshal(l.Payload, &p) != nil {
		return
	}
	switch {
	case l.Type == "turn_context" && p.Model != "":
		t.Model = p.Model
	case l.Type == "event_msg" && p.Type == "token_count" && p.Info != nil:
		t.UsageTokens = p.Info.Last.Input
		if p.Info.Window > 0 {
			t.Window = p.Info.Window
		}
	case l.Type == "event_msg" && p.Type == "user_message" && strings.TrimSpace(p.Message) != "":
		t.Requests = append(t.Requests, Line{Text: p.Message, Line: n})
		since.WriteString(p.Message)
	case l.Type == "event_msg" && p.Type == "agent_message" && strings.TrimSpace(p.Message) != "":
		t.LastSummary = Line{Text: p.Message, Line: n}
		since.WriteString(p.Message)
	case l.Type == "response_item" && p.Name == "apply_patch":
		since.WriteString(p.Input + p.Args)
		for _, m := range patchFile.FindAllStringSubmatch(p.Input+"\n"+unquoteArgs(p.Args), -1) {
			t.toolUse(block{Type: "tool_use", Name: "Write", Input: mustJSON(map[string]string{"file_path": strings.TrimSpace(m[1])})}, n)
		}
	}
}

// unquoteArgs reads apply_patch's JSON arguments ({"input": "..."}).
func unquoteArgs(args string) string {
	var a struct {
		Input string `json:"input"`
	}
	if json.Unmarshal([]byte(args), &a) == nil {
		return a.Input
	}
	return args
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
